package listwatch

import (
	"context"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/sharding"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/cache"
)

// Object is what the chain delivers: an API object with object metadata,
// comparable so that a nil one can be told apart.
type Object interface {
	Stored
	comparable
}

// Stored is what the chain records and hands on of an object: the object
// itself, or a compact store's record of it (Config.Store).
type Stored interface {
	runtime.Object
	metav1.Object
}

// Config is what the chain of one informer is made with.
type Config[T Object] struct {
	// GVR is the informer's resource, for errors and logs.
	GVR schema.GroupVersionResource
	// Convert turns what the source delivers into T. It must not modify
	// its argument and must be safe for concurrent use; a panic is
	// reported as a rejection.
	Convert func(runtime.Object) (T, error)
	// NewT allocates an empty T, for bookmarks of another type; nil if T
	// cannot be allocated.
	NewT func() T
	// Transform, if not nil, is done to every object converted, before it
	// is recorded or handed on; an error rejects the object.
	Transform func(T) (T, error)
	// Store, if not nil, is what the chain records and hands on in the
	// place of each object, once converted and transformed: a compact
	// store's record of it (a metav1.Object that the store keys, and that
	// reads decode). It must not fail: what it cannot make is the object
	// itself. nil hands on the objects.
	Store func(T) Stored
	// EncodedSize, if not nil, measures each object the chain records
	// and hands on (what Store made of it, if Store is set), in bytes,
	// for HeldEncodedBytes; it is called once for each object recorded,
	// must not modify it and must be safe for concurrent use. nil
	// measures nothing.
	EncodedSize func(Stored) int
	// StopForGood: once a resource the server listed is not served,
	// deliver the deletes, then make no more requests.
	StopForGood bool
	// NotServedProbes is the backoff of the probes while the resource is
	// not served; the zero Backoff is the default, 1 s doubling to 30 s.
	NotServedProbes wait.Backoff
	// UnexpectedType is the error that reports a value of another type
	// than T (the root package's ErrUnexpectedType), which the chain's
	// errors wrap.
	UnexpectedType error
}

// Hooks are how the chain reports upward. None may be nil.
type Hooks struct {
	// Reject is told of each object left out: key is its cache key
	// ("namespace/name", "name", or "" if it has no readable metadata).
	// It is called on the chain's goroutines.
	Reject func(ctx context.Context, key string, err error)
	// Served is told what the server answered, for the informer's state.
	Served Served
	// Meter is told what passes, for the informer's telemetry.
	Meter Meter
	// Selection returns the shard selection to request now (a nil
	// selector is every object), the generation it has, and a channel
	// closed when it changes.
	Selection func() (sharding.Selector, uint64, <-chan struct{})
	// ServedChanged returns a channel closed when the resources the
	// server serves may have changed since (a CustomResourceDefinition
	// created or changed): while its resource is not served, the chain
	// then probes it at once, and again soon, rather than at its
	// backoff's next time. A nil channel is never closed.
	ServedChanged func() <-chan struct{}
}

// Served is told what the server answered of the resource.
type Served interface {
	// Listed: a list of the whole resource (or a WatchList stream) was
	// answered.
	Listed()
	// NotServed: a list was answered 404 Not Found.
	NotServed(err error)
	// StoppedForGood: the resource it listed is no longer served, and the
	// chain makes no more requests (Config.StopForGood).
	StoppedForGood(err error)
	// Forbidden: a list or watch was answered 403 Forbidden.
	Forbidden(err error)
	// Failed: a list or watch failed otherwise.
	Failed(err error)
}

// Meter is told what passes through the chain.
type Meter interface {
	// Request: a list (one per page) or watch request was sent.
	Request(watch bool)
	// RequestFailed: a request failed, or an error event ended a watch.
	RequestFailed(ctx context.Context, watch bool, err error)
	// ReceivingInitialList reports whether the objects of lists are still
	// to be counted as the initial list's.
	ReceivingInitialList() bool
	// Received: n objects of the initial list (or of a WatchList stream's
	// initial events) came from the server.
	Received(ctx context.Context, n int)
	// Events: events were handed on to the informer, by kind.
	Events(added, updated, deleted, tombstoned int)
	// CountsEvents reports whether Events are counted at all, so that a
	// relist is compared with what was held only if so.
	CountsEvents() bool
	// CompleteList: a complete list (or WatchList stream) was delivered.
	CompleteList()
	// Arrival is the time a watch event arrives, 0 if it is not timed.
	Arrival() time.Duration
	// Stamp records when obj, handed on, arrived.
	Stamp(obj any, arrived time.Duration)
}

// Chain is the list/watch chain of one informer.
type Chain[T Object] struct {
	ingest *ingest[T]
	guard  *servedGuard
	filter *shardFilter
	// goroutines counts the goroutines of the watches the chain made.
	goroutines sync.WaitGroup
}

// New returns the chain of one informer over source.
func New[T Object](source cache.ListerWatcher, c Config[T], h Hooks) *Chain[T] {
	chain := &Chain[T]{filter: newShardFilter(h.Selection)}
	requests := newRequestCounter(source, h.Meter)
	chain.ingest = newIngest(requests.lw, c, h, chain.filter, &chain.goroutines)
	chain.guard = newServedGuard(chain.ingest.lw, requests.lw, c, h, &chain.goroutines, chain.ingest.forget)
	return chain
}

// ListerWatcher is what the informer's reflector lists and watches
// through.
func (c *Chain[T]) ListerWatcher() cache.ListerWatcher { return c.guard.lw }

// Wait returns when every goroutine of the watches the chain made has
// ended; they end with the context of their watch.
func (c *Chain[T]) Wait() { c.goroutines.Wait() }

// FilteredOnClient reports whether the server was seen to ignore the
// ShardSelector: the chain then keeps the shard's objects itself.
func (c *Chain[T]) FilteredOnClient() bool { return c.filter.onClientSide.Load() }

// Held returns how many objects the chain has handed on to the
// informer's store and not deleted since: what the store holds, once the
// informer's queue has handed it what the reflector took (the store lags
// the chain, never leads it), and 0 while the resource is not served (the
// guard answers lists with no object). It costs one lock and allocates
// nothing, whatever the number of objects.
func (c *Chain[T]) Held() int {
	if c.guard.isNotServed() {
		return 0
	}
	return c.ingest.record.len()
}

// HeldEncodedBytes returns the sum of Config.EncodedSize over the objects
// Held counts, each measured once, when the chain handed it on; 0 while
// the resource is not served, and without Config.EncodedSize. Like Held,
// it costs one lock and allocates nothing, whatever the number of objects.
func (c *Chain[T]) HeldEncodedBytes() int64 {
	if c.guard.isNotServed() {
		return 0
	}
	return c.ingest.record.encodedBytes()
}

// LastListed returns what the last whole list (or WatchList stream)
// delivered, whether there was one, and a channel closed when there is
// another, or a list fails (ListFailing).
func (c *Chain[T]) LastListed() (last Listing, ok bool, next <-chan struct{}) {
	return c.filter.lastListed()
}

// Stale returns the objects the informer holds at their last good state
// although the server has a newer one that did not decode, convert or
// transform (stale.go), sorted by key.
func (c *Chain[T]) Stale() []Staleness { return c.ingest.record.staleObjects() }

// StaleCount returns how many objects Stale would return.
func (c *Chain[T]) StaleCount() int { return c.ingest.record.staleCount() }

// StaleOf returns the staleness of the object of cache key key
// ("namespace/name" or "name"), if the informer holds it stale.
func (c *Chain[T]) StaleOf(key string) (Staleness, bool) {
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return Staleness{}, false
	}
	return c.ingest.record.latestStaleness(cache.ObjectName{Namespace: namespace, Name: name})
}

// NewestHandedOn returns the resourceVersion of the newest object the chain
// handed on to the reflector (handedOn): a watch event's (not a
// bookmark's) or a listed object's; "" before the first.
func (c *Chain[T]) NewestHandedOn() string { return c.ingest.handed.get() }

// HandedOn returns the resourceVersion of the state of the object of cache
// key key ("namespace/name" or "name") that the chain last handed on to
// the informer's store, and whether it holds the object: what the store
// will hold once it has applied what the reflector took (the store lags
// the chain, never leads it).
func (c *Chain[T]) HandedOn(key string) (resourceVersion string, held bool) {
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return "", false
	}
	last, ok := c.ingest.record.latest(cache.ObjectName{Namespace: namespace, Name: name})
	if !ok {
		return "", false
	}
	return last.GetResourceVersion(), true
}

// ListFailing reports whether the server answered the last whole list (or
// WatchList stream) with an error (a 404, a 403, a 5xx, a timeout): the
// reflector lists again by itself, with its backoff, under the selection
// current then.
func (c *Chain[T]) ListFailing() bool { return c.filter.listFailing() }

// stage makes a cache.ListerWatcher of a stage's list and watch, which
// answers the reflector's WatchList question as inner does.
func stage(inner cache.ListerWatcher, list cache.ListWithContextFunc, watchFunc cache.WatchFuncWithContext) cache.ListerWatcher {
	return cache.ToListWatcherWithWatchListSemantics(&cache.ListWatch{ListWithContextFunc: list, WatchFuncWithContext: watchFunc}, inner)
}
