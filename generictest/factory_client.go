package generictest

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	dynamicfake "k8s.io/client-go/dynamic/fake"
)

// factoryClient is the fake dynamic client as one of the Fake's factories
// uses it: each watch it opens is marked as that factory's, so that the
// Fake waits for the watch of each of its informers, and not for any watch
// of the same resource (the other factory's informer of it, or one the
// code under test opened).
//
// It embeds the fake client, so that client-go sees the same client (one
// that does not support WatchList semantics, for example).
type factoryClient struct {
	*dynamicfake.FakeDynamicClient
	factory factoryName
	watches *watchSwitch
}

func (c *factoryClient) Resource(gvr schema.GroupVersionResource) dynamic.NamespaceableResourceInterface {
	return &factoryResource{NamespaceableResourceInterface: c.FakeDynamicClient.Resource(gvr), client: c}
}

// factoryResource marks the watches of a resource in every namespace.
type factoryResource struct {
	dynamic.NamespaceableResourceInterface
	client *factoryClient
}

func (r *factoryResource) Namespace(namespace string) dynamic.ResourceInterface {
	return &factoryNamespacedResource{ResourceInterface: r.NamespaceableResourceInterface.Namespace(namespace), client: r.client}
}

func (r *factoryResource) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	return r.client.mark(r.NamespaceableResourceInterface.Watch(ctx, opts))
}

// factoryNamespacedResource marks the watches of a resource in a namespace.
type factoryNamespacedResource struct {
	dynamic.ResourceInterface
	client *factoryClient
}

func (r *factoryNamespacedResource) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	return r.client.mark(r.ResourceInterface.Watch(ctx, opts))
}

// mark marks w, the Fake's proxy of a watch, as the factory's.
func (c *factoryClient) mark(w watch.Interface, err error) (watch.Interface, error) {
	if p, ok := w.(*proxyWatch); ok && err == nil {
		c.watches.own(p, c.factory)
	}
	return w, err
}
