package generictest

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"
)

// metadataClient is a metadata.Interface over a dynamic client: the
// metadata client of the Fake's factory (typed.Clients.Metadata), which
// feeds its metadata-only informers (typed.MetadataFor) through the same
// client, and so the same request tracking (factoryClient), as its other
// informers.
//
// Selectors the server would refuse are 400 Bad Request (client-go's fake
// client panics on them).
//
// It returns *metav1.PartialObjectMetadata as client-go's metadata client
// does from an API server (which sends them as protobuf): the object's
// metadata, with an empty TypeMeta, in Get, Patch, List and watch events
// alike. Delete, DeleteWithResult and DeleteCollection are forwarded.
type metadataClient struct {
	dynamic dynamic.Interface
}

var _ metadata.Interface = (*metadataClient)(nil)

// IsWatchListSemanticsUnSupported tells client-go's reflector, as the fake
// dynamic client does, that its watches cannot stream a list.
func (c *metadataClient) IsWatchListSemanticsUnSupported() bool { return true }

func (c *metadataClient) Resource(gvr schema.GroupVersionResource) metadata.Getter {
	resource := c.dynamic.Resource(gvr)
	return &metadataResource{resource: resource, namespaceable: resource}
}

// metadataResource is a resource of metadataClient, in every namespace or
// (namespaceable nil) in one.
type metadataResource struct {
	resource      dynamic.ResourceInterface
	namespaceable dynamic.NamespaceableResourceInterface
}

func (r *metadataResource) Namespace(namespace string) metadata.ResourceInterface {
	if r.namespaceable == nil {
		return r
	}
	return &metadataResource{resource: r.namespaceable.Namespace(namespace)}
}

func (r *metadataResource) Delete(ctx context.Context, name string, opts metav1.DeleteOptions, subresources ...string) error {
	return r.resource.Delete(ctx, name, opts, subresources...)
}

// DeleteWithResult forwards to the dynamic client's, and hands back the
// object it deleted as its metadata (*metav1.PartialObjectMetadata), as
// client-go's metadata client does; a Status stays a Status.
func (r *metadataResource) DeleteWithResult(ctx context.Context, name string, opts metav1.DeleteOptions, subresources ...string) (metav1.APIResult, error) {
	result, err := r.resource.DeleteWithResult(ctx, name, opts, subresources...)
	if err != nil || result == nil {
		return result, err
	}
	return metadataResult{result}, nil
}

// metadataResult is a delete's result as the metadata client gives it.
type metadataResult struct{ metav1.APIResult }

func (r metadataResult) Get() (runtime.Object, error) {
	obj, err := r.APIResult.Get()
	if u, ok := obj.(*unstructured.Unstructured); ok && err == nil {
		return partialOf(u)
	}
	return obj, err
}

func (r *metadataResource) DeleteCollection(ctx context.Context, opts metav1.DeleteOptions, listOpts metav1.ListOptions) error {
	if err := checkSelectors(listOpts); err != nil {
		return err
	}
	return r.resource.DeleteCollection(ctx, opts, listOpts)
}

func (r *metadataResource) Get(ctx context.Context, name string, opts metav1.GetOptions, subresources ...string) (*metav1.PartialObjectMetadata, error) {
	u, err := r.resource.Get(ctx, name, opts, subresources...)
	if err != nil {
		return nil, err
	}
	return partialOf(u)
}

func (r *metadataResource) List(ctx context.Context, opts metav1.ListOptions) (*metav1.PartialObjectMetadataList, error) {
	if err := checkSelectors(opts); err != nil {
		return nil, err
	}
	list, err := r.resource.List(ctx, opts)
	if err != nil {
		return nil, err
	}
	partial := &metav1.PartialObjectMetadataList{Items: make([]metav1.PartialObjectMetadata, len(list.Items))}
	partial.ResourceVersion = list.GetResourceVersion()
	partial.Continue = list.GetContinue()
	partial.RemainingItemCount = list.GetRemainingItemCount()
	for i := range list.Items {
		item, err := partialOf(&list.Items[i])
		if err != nil {
			return nil, err
		}
		partial.Items[i] = *item
	}
	return partial, nil
}

func (r *metadataResource) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	if err := checkSelectors(opts); err != nil {
		return nil, err
	}
	w, err := r.resource.Watch(ctx, opts)
	if err != nil {
		return nil, err
	}
	return newTypedWatch(w, func(obj runtime.Object) (runtime.Object, error) {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return obj, nil // a Status, of an error event
		}
		return partialOf(u)
	}), nil
}

func (r *metadataResource) Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, subresources ...string) (*metav1.PartialObjectMetadata, error) {
	u, err := r.resource.Patch(ctx, name, pt, data, opts, subresources...)
	if err != nil {
		return nil, err
	}
	return partialOf(u)
}

// partialOf returns the metadata of u, with no TypeMeta, as client-go's
// metadata client returns it.
func partialOf(u *unstructured.Unstructured) (*metav1.PartialObjectMetadata, error) {
	partial := &metav1.PartialObjectMetadata{}
	content, _, err := unstructured.NestedFieldNoCopy(u.Object, "metadata")
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	m, ok := content.(map[string]any)
	if !ok && content != nil {
		return nil, apierrors.NewInternalError(fmt.Errorf("the metadata of %s is a %T, not an object", keyOf(u), content))
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, &partial.ObjectMeta); err != nil {
		return nil, apierrors.NewInternalError(fmt.Errorf("the metadata of %s: %w", keyOf(u), err))
	}
	return partial, nil
}
