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
	// controller-runtime's cache fails with a no-kind-match error
	// (controller-runtime #1179, #2589): in every view (typed objects,
	// *unstructured.Unstructured, *metav1.PartialObjectMetadata), however
	// long after the cache started the CRD is installed. GetInformer (with
	// BlockUntilSynced(true), the default), GetInformerForKind, Get and
	// List block until it synced or their context ends (then
	// controller-runtime's Timeout error); GetInformer with
	// BlockUntilSynced(false) returns at once an informer that syncs later,
	// and its handlers get the objects then. The kind must be registered in
	// cache.Options.Scheme (a typed object) or be named by its GVK (an
	// *unstructured.Unstructured or *metav1.PartialObjectMetadata).
	//
	// The informer syncs within about a second of the CRD's Established
	// condition: while any informer waits, the cache keeps one watch of
	// CustomResourceDefinitions (metadata only), and each CRD created or
	// changed makes the waiting informers ask discovery at once. That
	// watch needs list and watch of customresourcedefinitions
	// (apiextensions.k8s.io); without them (RBAC), the informers still
	// ask with backoff, 1 s doubling to 30 s, so they sync up to 30 s
	// after the CRD is served. Nothing is watched or asked while no
	// informer waits.
	//
	// Until the kind is served, its scope is unknown, and its resource is
	// guessed from its kind (the lower-case plural CRDs use by
	// convention); once served, the informer lists the resource and at the
	// scope discovery gives, and reads follow that scope (a cluster-scoped
	// kind ignores the cache's namespace). In a cache of several
	// namespaces (DefaultNamespaces, ByObject.Namespaces), Get, List and a
	// blocking GetInformer wait until the kind is served and then go to
	// the per-namespace informers or the cluster-scoped one as its scope
	// says; a GetInformer with BlockUntilSynced(false) and IndexField take
	// a kind not served yet as namespaced (one informer per namespace,
	// each of which holds every object should the kind turn out
	// cluster-scoped). See docs/controller-runtime.md, "Kinds installed
	// later".
	//
	// Without it (the default), a kind not served is controller-runtime's
	// no-kind-match error, as with controller-runtime's cache.
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
