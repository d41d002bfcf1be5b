// Package controller runs a reconcile loop over the library's informers:
// the typed counterpart of client-go's workqueue controllers and of
// controller-runtime's controller, without code generation.
//
// A Controller reconciles the keys (cache.ObjectName) of one primary type
// T. Its informers are any of the one factory's (package typed): typed,
// *unstructured.Unstructured or metadata-only. Events of the primary
// enqueue the object's own key (For); events of secondary objects enqueue
// the keys of the primaries they map to (Watches, Owns, WatchesByIndex). A
// client-go rate-limited workqueue (workqueue.TypedRateLimitingInterface)
// holds the keys: a key is reconciled by one worker at a time, and a key
// added again while it is reconciled is reconciled once more afterwards.
//
//	quotas, _ := typed.InformerFor[*v1.Quota](factory)
//	c, err := controller.New("quota", controller.For(quotas, controller.GenerationChanged), reconcile,
//		controller.Watches(configMaps, quotasSelecting))
//	factory.Start(ctx)
//	err = c.Run(ctx)
//
// # Reads that do not go stale after the controller's own writes
//
// A reconcile's context carries the key it reconciles. A write made with
// it through a typed.Client is recorded for that key; the next reconcile of
// the key starts only once every informer of the written resource that the
// controller watches (For, Watches, Owns, WatchesByIndex) has caught up
// with the write (Informer.WaitForWrite, or for a delete, no longer holds
// the object), so a reconcile never acts twice on the state its own write
// replaced. A Lister read without watching its informer is not waited for.
// This is KEP-5647's ConsistencyStore (kube-controller-manager's
// pkg/controller/util/consistency: WroteAt, EnsureReady, Clear), with a
// bounded wait (WithConsistencyTimeout) instead of an immediate requeue. The
// wait holds its worker (usually for the watch's latency, milliseconds).
//
// A key whose caches have not caught up within the timeout is delayed, never
// reconciled on the older state: it is requeued with the rate limiter's
// backoff, reported to the ErrorHandler as a *ConsistencyDelayError, and
// counted (ConsistencyMetricsProvider); its writes stay pending, through
// any number of delays. A write is forgotten only when every informer of
// its resource has it, or when it is known that one never will show it:
//
//   - the object is outside the informer's selection (another namespace,
//     labels its label selector does not match, a field selector on
//     metadata.name or metadata.namespace it fails) or shard;
//   - the object was deleted since, or the cache holds a newer state of it
//     (a later resource version);
//   - the informer has stopped (its cache will not change; reported).
//
// Anything else is a delay: a cache behind the write, an informer that is
// Forbidden, not served or not started, resource versions that cannot be
// ordered (*generic.ResourceVersionError), client-go's feature gate
// AtomicFIFO off (generic.ErrResourceVersionNotTracked).
//
// One case is decided when the controller is built (For, Watches, Owns,
// WatchesByIndex), from the informer's Status().FieldSelector: a field
// selector on other fields than metadata.name and metadata.namespace
// (spec.nodeName=n), which no wait can judge a written object against (the
// server sends no event of an object written outside it, and the cache's
// resource version reaches the write's only with later events or a
// bookmark). Such an informer is waited for only until its cache holds no
// state of the written object older than the write (the server sends it an
// update, or a delete when the write took the object out of the
// selection); a write that created the object, or brought it into the
// selection, is not waited for on that informer. An informer of
// generic.NewInformer is taken to select every object of its resource: if
// its ListerWatcher filters, a write outside what it selects delays the key
// until the cache's resource version passes the write's.
//
// # Sharding
//
// On replica i of n (generic.WithShard on the factory), the primary's
// informer holds only its shard's objects, and so does each secondary
// informer of the factory. A primary's events enqueue only its shard's keys;
// a key mapped from a secondary object is enqueued only while the primary's
// cache holds it, so each replica reconciles its own shard's keys. Shard by
// namespace (generic.WithShardKey(generic.ShardByNamespace)) when a
// primary's secondaries live in its namespace: they are then in the same
// replica's caches. Unsharded, every mapped key is enqueued, whether or
// not its primary exists (a reconcile may create it).
//
// With a Lease membership (generic.WithMembership on the factory), the
// controller reconciles only the keys whose primary its replica owns
// (generic.Informer.Ownership), enqueues the cached primaries it comes to
// own, and cancels the context of a reconcile whose key it no longer owns;
// see docs/sharding.md for the timing bounds.
//
// # Lifecycle
//
// Run registers the handlers, waits until each has received its informer's
// initial list, starts the workers, and when ctx ends removes the handlers,
// shuts the queue down and returns once every reconcile in progress has
// returned; it leaves no goroutine behind. A reconcile that panics is
// recovered: the panic is reported as an error, with its stack, and the key
// requeued with rate limiting.
package controller
