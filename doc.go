// Package generic provides type-parameterized informers and listers for
// Kubernetes: the typed counterparts of client-go's shared informers and
// generated listers, for any object type, with no code generation.
//
// The core has three parts:
//
//   - Lister[T] and NamespaceLister[T] read T from an informer's
//     cache.Indexer: Get, List with a label selector, Namespace, ByIndex.
//     NewLister makes one over any indexer.
//   - Informer[T] wraps a cache.SharedIndexInformer: a typed Lister,
//     client-go's cache.TypedResourceEventHandler[T] (delete tombstones
//     arrive as cache.DeletedObject[T], never as a value to type-assert),
//     typed indexers, and a Status (Syncing, Synced, NotServed, Forbidden,
//     Stopped).
//   - Factory[T] shares one informer per GroupVersionResource, starts them,
//     waits for their caches (WaitForCacheSync, WaitForCacheSyncError),
//     releases one (Release) and stops them all (Shutdown).
//
// A Factory lists and watches through a Source (DynamicSource for the
// dynamic client) and turns what arrives into T with a Converter (Identity,
// FromUnstructured), once per object as it is ingested, never on reads.
// Options (WithNamespace, WithResyncPeriod, WithIndexers, WithTransform,
// WithErrorHandler, WithStateHandler, WithStopWhenNotServed,
// WithStripManagedFields, ...) apply to every informer of a Factory.
//
// Two instantiations are ready-made: package unstructured
// (*unstructured.Unstructured by GVR, a drop-in for client-go's
// dynamicinformer and dynamiclister) and package typed (any Go type in a
// runtime.Scheme, decoded by a typed REST client). Package generictest
// builds them over fake clients for controller tests.
//
// Objects returned by listers and passed to handlers are shared cache
// state: treat them as read-only. Listers, informers and factories are safe
// for concurrent use.
package generic
