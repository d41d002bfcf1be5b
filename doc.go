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
//     typed indexers, and a Status (NotStarted, Syncing, Synced, NotServed,
//     Forbidden, Stopped), which moves only as the table in State's doc says.
//     TypedInformer gives one as client-go's cache.TypedSharedIndexInformer[T],
//     for code written against informer-gen's typed informers.
//   - Registry holds the informers of every kind and owns their lifecycle
//     once: it starts them (also those asked for after Start), waits for
//     their caches (WaitForCacheSync, a SyncResult per informer), reshards
//     them, removes a resource (RemoveResource) and stops them all
//     (Shutdown). Factory[T] is a view of a Registry for objects of T: it
//     shares one informer per GroupVersionResource and selection and hands
//     out Handles whose Release drops exactly one hold and whose Done says
//     when the informer has ended (Acquire).
//
// A Factory lists and watches through a Source (DynamicSource for the
// dynamic client) and turns what arrives into T with a Converter (Identity,
// FromUnstructured), once per object as it is ingested, never on reads.
// Every informer reaches its cache through that one ingest path: an object
// that does not decode (Undecodable) or convert is reported as a
// *ConversionError and skipped, and a known object whose new state does not
// decode keeps its last good state, marked stale (Status.Stale): a delete
// is a fact from the server, never an inference from an error.
// Options come in two types: a FactoryOption applies to every informer of
// a Registry, an InformerOption to one (Acquire) and, given to a factory,
// to all (WithNamespace, WithResyncPeriod, WithIndexers, WithTransform,
// WithErrorHandler, WithStateHandler, WithStopWhenNotServed,
// WithStripManagedFields, ...). WithMembership is a FactoryOption only.
//
// Three instantiations are ready-made: package unstructured
// (*unstructured.Unstructured by GVR, a drop-in for client-go's
// dynamicinformer and dynamiclister), package metadata
// (*metav1.PartialObjectMetadata, a drop-in for metadatainformer and
// metadatalister) and package typed (any Go type in a runtime.Scheme,
// decoded by a typed REST client), whose Factory hands out all three kinds.
// Package generictest builds them over fake clients for controller tests.
//
// Objects returned by listers and passed to handlers are shared cache
// state: treat them as read-only. Listers, informers and factories are safe
// for concurrent use.
package generic
