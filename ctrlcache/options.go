package ctrlcache

import (
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/generic-informers/generic"
)

// Options are this library's settings for a cache, beside controller-runtime's
// cache.Options (which BuilderWithOptions's cache.NewCacheFunc takes as
// controller-runtime's does). The zero Options is New's: a cache that answers
// as controller-runtime's does, with this library's smaller objects.
type Options struct {
	// Factory are the options of the one generic.Registry behind the cache,
	// which every informer of it shares: generic.WithShard to cache one
	// shard of every resource, generic.WithMembership to have a Lease-based
	// membership give the replica its shard (docs/controller-runtime.md,
	// "Sharding a manager").
	Factory []generic.FactoryOption

	// Informer are informer options applied to every informer of the
	// cache, before those the cache.Options make (namespace, selectors,
	// transform, resync period), which win: generic.WithMetricsProvider,
	// generic.WithStripManagedFields, generic.WithShardKey,
	// generic.WithStopWhenNotServed, generic.WithErrorHandler, ... An
	// option the Registry refuses (see generic.Factory.Acquire) makes
	// GetInformer, Get and List return its error.
	Informer []generic.InformerOption

	// ByObject are informer options for the informers of one type, applied
	// after Informer and before the cache.Options' own: for example
	// generic.WithCompactStore(256) for a type cached in full but seldom
	// read. The key names a kind and a view of it, as the objects a Get
	// or List reads into: a typed object (&corev1.Pod{}) the typed
	// informers, an *unstructured.Unstructured or a
	// *metav1.PartialObjectMetadata with its kind set the unstructured or
	// metadata-only ones. (The compact store holds typed objects with a
	// protobuf encoding: k8s.io/api's types.)
	ByObject map[client.Object][]generic.InformerOption

	// WaitForUnservedKinds, if true, gives a kind the server does not serve
	// yet (its CustomResourceDefinition not installed, or not Established)
	// an informer that waits, and syncs once the kind is served, where
	// controller-runtime's cache fails with a no-kind-match error. Such an
	// informer asks discovery again with backoff (1 s doubling to 30 s);
	// GetInformer with BlockUntilSynced(true), Get and List block until it
	// synced or their context ends. The kind must be registered in
	// cache.Options.Scheme (a typed object) or be named by its GVK (an
	// *unstructured.Unstructured or *metav1.PartialObjectMetadata), and its
	// resource is guessed from its kind (the lower-case plural CRDs use by
	// convention) until discovery knows it.
	WaitForUnservedKinds bool

	// NoSharing, if true, makes every cached object hold maps, slices and
	// pointed-to structs of its own (typed.Clients.NoSharing). By default
	// equal ones are shared across the cache's objects, which is why the
	// cache is small; Get and List hand out deep copies (unless
	// UnsafeDisableDeepCopy), which share nothing, so sharing is invisible
	// to callers who do not disable deep copy.
	NoSharing bool

	// Metrics, if true, measures every informer of the cache (this
	// library's informer metrics, generic_informer_*, and the cache's size
	// in bytes per resource, generic_informer_objects_encoded_bytes; see
	// docs/metrics.md) and serves them from controller-runtime's
	// metrics.Registry, so that a manager's metrics endpoint serves them
	// beside its own. The first cache made with Metrics in the process
	// registers the Prometheus adapter's collector there (its
	// InformerCollector: controller-runtime's own workqueue metrics stay
	// controller-runtime's); every later one reports to it, and the
	// informers of one resource in all of them are added up. If the
	// program registered an InformerCollector there itself, the caches
	// report to that one. A registration that fails (a collector of other
	// metrics of the same names) makes New return its error. The provider
	// is given to every informer after the options of Informer (a
	// generic.WithMetricsProvider there is overridden) and before those of
	// ByObject.
	Metrics bool
}

// isZero reports whether o sets nothing.
func (o Options) isZero() bool {
	return len(o.Factory) == 0 && len(o.Informer) == 0 && len(o.ByObject) == 0 && !o.WaitForUnservedKinds && !o.NoSharing && !o.Metrics
}
