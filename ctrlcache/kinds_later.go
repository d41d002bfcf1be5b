package ctrlcache

import (
	"context"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// Kinds installed later (Options.WaitForUnservedKinds). A kind whose CRD
// is not installed yet has no scope either: the RESTMapper does not know
// it. A cache of one namespace set (the default: every namespace) gives it
// an informer at once, which ignores the namespace should the kind turn
// out cluster-scoped (typed.InformerForKind), and its reader asks the
// RESTMapper for the scope at each read (entry.clusterScoped). A cache of
// several namespaces (DefaultNamespaces, ByObject.Namespaces) sends a
// namespaced kind to one informer per namespace and a cluster-scoped one
// to one informer of every namespace, so it must know the scope first:
// Get, List and GetInformer with BlockUntilSynced(true) wait until the
// kind is served (the informer of one namespace's cache syncs), then go
// where its scope says; a GetInformer that must not block, IndexField and
// RemoveInformer take the kind as namespaced.

// scopeOf reports whether obj's kind is namespaced, as
// apiutil.IsObjectNamespaced does; with WaitForUnservedKinds, a kind not
// served yet is first waited for if block (ctx ending first is
// controller-runtime's Timeout error), and otherwise taken as namespaced.
func (c *multiNamespaceCache) scopeOf(ctx context.Context, obj runtime.Object, block bool) (bool, error) {
	namespaced, err := apiutil.IsObjectNamespaced(obj, c.Scheme, c.RESTMapper)
	if err == nil || !c.waitForUnserved || !meta.IsNoMatchError(err) {
		return namespaced, err
	}
	if !block {
		return true, nil
	}
	if err := c.waitUntilServed(ctx, obj); err != nil {
		return false, err
	}
	return apiutil.IsObjectNamespaced(obj, c.Scheme, c.RESTMapper)
}

// waitUntilServed waits until the informer of obj's kind in the cache of
// the first namespace (sorted) has synced: the kind is served then. That
// informer is the one a namespaced kind uses; of a cluster-scoped kind it
// holds every object (it ignores the namespace).
func (c *multiNamespaceCache) waitUntilServed(ctx context.Context, obj runtime.Object) error {
	namespaces := make([]string, 0, len(c.namespaceToCache))
	for ns := range c.namespaceToCache {
		namespaces = append(namespaces, ns)
	}
	if len(namespaces) == 0 {
		return fmt.Errorf("no namespace to wait for %T to be served in", obj)
	}
	slices.Sort(namespaces)
	item, ok := obj.(client.Object)
	if !ok {
		return fmt.Errorf("%T is not a client.Object", obj)
	}
	_, err := c.namespaceToCache[namespaces[0]].GetInformer(ctx, item, crcache.BlockUntilSynced(true))
	return err
}

// clusterScoped returns the cache of cluster-scoped objects; an error if
// there is none (ByObject.Namespaces of a kind that turned out
// cluster-scoped once served), as controller-runtime's New refuses
// ByObject.Namespaces for a cluster-scoped type.
func (c *multiNamespaceCache) clusterScoped(obj runtime.Object) (crcache.Cache, error) {
	if c.clusterCache == nil {
		return nil, fmt.Errorf("type %T is not namespaced, but its ByObject.Namespaces setting is not nil", obj)
	}
	return c.clusterCache, nil
}

// blocks reports whether opts ask GetInformer to block until synced, its
// default.
func blocks(opts []crcache.InformerGetOption) bool {
	getOpts := crcache.InformerGetOptions{}
	for _, opt := range opts {
		opt(&getOpts)
	}
	return getOpts.BlockUntilSynced == nil || *getOpts.BlockUntilSynced
}
