package generictest

import (
	"context"
	"sync/atomic"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	dynamicfake "k8s.io/client-go/dynamic/fake"
)

// factoryClient is the fake dynamic client as the Fake's factory uses it.
// The factory asks it for a resource when it makes an informer, and the
// Fake makes one informer at a time: the resource it hands out then is the
// informer's, and records what its requests select (informerRequests) and
// marks its watches, so that the Fake knows which changes each informer
// sees and waits for each informer's own watch, not any watch of the same
// resource.
//
// The metadata client of the factory (metadataClient) is over it too, so
// that metadata-only informers are tracked in the same way.
//
// It embeds the fake client, so that client-go sees the same client (one
// that does not support WatchList semantics, for example).
type factoryClient struct {
	*dynamicfake.FakeDynamicClient
	watches *watchSwitch
	// making is the informer being made, if any.
	making *atomic.Pointer[informerRequests]
}

func (c *factoryClient) Resource(gvr schema.GroupVersionResource) dynamic.NamespaceableResourceInterface {
	requests := c.making.Load()
	if requests == nil {
		requests = &informerRequests{}
	}
	return &factoryResource{NamespaceableResourceInterface: c.FakeDynamicClient.Resource(gvr), client: c, requests: requests}
}

// factoryResource is a resource of an informer, in every namespace.
type factoryResource struct {
	dynamic.NamespaceableResourceInterface
	client   *factoryClient
	requests *informerRequests
}

func (r *factoryResource) Namespace(namespace string) dynamic.ResourceInterface {
	return &factoryNamespacedResource{ResourceInterface: r.NamespaceableResourceInterface.Namespace(namespace),
		client: r.client, requests: r.requests, namespace: namespace}
}

func (r *factoryResource) List(ctx context.Context, opts metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	r.requests.record("", opts)
	return r.NamespaceableResourceInterface.List(ctx, opts)
}

func (r *factoryResource) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	r.requests.record("", opts)
	w, err := r.NamespaceableResourceInterface.Watch(ctx, opts)
	return r.client.mark(r.requests, w, err)
}

// factoryNamespacedResource is a resource of an informer, in a namespace.
type factoryNamespacedResource struct {
	dynamic.ResourceInterface
	client    *factoryClient
	requests  *informerRequests
	namespace string
}

func (r *factoryNamespacedResource) List(ctx context.Context, opts metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	r.requests.record(r.namespace, opts)
	return r.ResourceInterface.List(ctx, opts)
}

func (r *factoryNamespacedResource) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	r.requests.record(r.namespace, opts)
	w, err := r.ResourceInterface.Watch(ctx, opts)
	return r.client.mark(r.requests, w, err)
}

// mark marks w, the Fake's proxy of a watch, as the informer's.
func (c *factoryClient) mark(owner *informerRequests, w watch.Interface, err error) (watch.Interface, error) {
	if p, ok := w.(*proxyWatch); ok && err == nil {
		c.watches.own(p, owner)
	}
	return w, err
}
