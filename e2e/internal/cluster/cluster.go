// Package cluster applies fixtures to a real API server for the e2e tests,
// benchmarks and kwatch: manifests with CRDs among them, in order, waiting
// until each CRD is established before its objects.
package cluster

import (
	"context"
	"fmt"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-api/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-api/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
)

// Cluster talks to one API server with a dynamic client and a RESTMapper
// that learns new CRDs.
type Cluster struct {
	Config     *rest.Config
	Dynamic    dynamic.Interface
	Extensions apiextensionsclient.Interface
	Mapper     *restmapper.DeferredDiscoveryRESTMapper
}

// New returns a Cluster for config.
func New(config *rest.Config) (*Cluster, error) {
	dyn, err := dynamic.NewForConfig(config)
	if err != nil {
		return nil, err
	}
	ext, err := apiextensionsclient.NewForConfig(config)
	if err != nil {
		return nil, err
	}
	disco, err := discovery.NewDiscoveryClientForConfig(config)
	if err != nil {
		return nil, err
	}
	return &Cluster{
		Config:     config,
		Dynamic:    dyn,
		Extensions: ext,
		Mapper:     restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disco)),
	}, nil
}

// Namespace returns a Namespace object named name, to Apply.
func Namespace(name string) *unstructured.Unstructured {
	ns := &unstructured.Unstructured{}
	ns.SetAPIVersion("v1")
	ns.SetKind("Namespace")
	ns.SetName(name)
	return ns
}

// Apply creates each object, or updates it if it exists, in order. After a
// CustomResourceDefinition it waits until the CRD is established and its
// resource is discoverable, so that later objects may be of its kind.
func (c *Cluster) Apply(ctx context.Context, objs ...*unstructured.Unstructured) error {
	for _, obj := range objs {
		if err := c.apply(ctx, obj); err != nil {
			return fmt.Errorf("apply %s %s/%s: %w", obj.GetKind(), obj.GetNamespace(), obj.GetName(), err)
		}
		if obj.GetKind() == "CustomResourceDefinition" {
			if err := c.WaitForCRD(ctx, obj.GetName()); err != nil {
				return err
			}
		}
	}
	return nil
}

func (c *Cluster) apply(ctx context.Context, obj *unstructured.Unstructured) error {
	resource, err := c.ResourceFor(obj)
	if err != nil {
		return err
	}
	_, err = resource.Create(ctx, obj, metav1.CreateOptions{})
	if !apierrors.IsAlreadyExists(err) {
		return err
	}
	existing, err := resource.Get(ctx, obj.GetName(), metav1.GetOptions{})
	if err != nil {
		return err
	}
	obj = obj.DeepCopy()
	obj.SetResourceVersion(existing.GetResourceVersion())
	_, err = resource.Update(ctx, obj, metav1.UpdateOptions{})
	return err
}

// ResourceFor returns the dynamic client of obj's resource, in its
// namespace if it is namespaced.
func (c *Cluster) ResourceFor(obj *unstructured.Unstructured) (dynamic.ResourceInterface, error) {
	gvk := obj.GroupVersionKind()
	mapping, err := c.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return nil, err
	}
	if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
		return c.Dynamic.Resource(mapping.Resource).Namespace(obj.GetNamespace()), nil
	}
	return c.Dynamic.Resource(mapping.Resource), nil
}

// WaitForCRD waits until the CRD is Established and its kind is known to the
// RESTMapper.
func (c *Cluster) WaitForCRD(ctx context.Context, name string) error {
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		crd, err := c.Extensions.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil //nolint:nilerr // not created or not readable yet: poll again
		}
		for _, cond := range crd.Status.Conditions {
			if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
				c.Mapper.Reset()
				gk := schema.GroupKind{Group: crd.Spec.Group, Kind: crd.Spec.Names.Kind}
				_, err := c.Mapper.RESTMapping(gk)
				return err == nil, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("CRD %s not established: %w", name, err)
	}
	return nil
}

// DeleteCRD deletes a CRD and waits until it is gone.
func (c *Cluster) DeleteCRD(ctx context.Context, name string) error {
	crds := c.Extensions.ApiextensionsV1().CustomResourceDefinitions()
	if err := crds.Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := crds.Get(ctx, name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	c.Mapper.Reset()
	return err
}
