package listwatch

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/sharding"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

// shardFilter is the ingest's part in sharding (KEP-5866). It sets the
// ShardSelector of the informer's shard on every list and watch request,
// and filters what comes back with the same hash and bounds (apimachinery's
// pkg/sharding, which the API server runs too), so that an informer holds
// its shard whether the server applied the selector or not.
//
// A server that applied it says so in the list response's
// metadata.shardInfo; a server without the ShardedListAndWatch feature
// gate (or older than 1.36) ignores the selector and sends every object.
// The filter notices that once, from a list without shardInfo or from an
// object outside the shard in a watch (a WatchList stream carries no
// shardInfo), logs it, and reports it (Chain.FilteredOnClient).
//
// It also makes a change of shard take effect: a watch made at an older
// selection ends with 410 Gone, so the reflector relists with the new one,
// and its Replace delivers the objects that left the shard as deletes and
// those that joined as adds.
type shardFilter struct {
	selection func() (sharding.Selector, uint64, <-chan struct{})
	// onClientSide is set once the server was seen to ignore the selector.
	onClientSide atomic.Bool

	mu sync.Mutex
	// paging is the selection of the list whose pages are being read: all
	// pages of one list use the selection of its first.
	paging view
	// listed is what the last whole list (or WatchList's initial events)
	// delivered; hasListed is false before the first.
	listed    Listing
	hasListed bool
	// failing is set when a whole list (or WatchList stream) is answered
	// with an error, and cleared when one is delivered.
	failing bool
	// listedChanged is closed, and replaced, whenever listed or failed
	// changes.
	listedChanged chan struct{}
}

// view is what one list or watch request is made with: the shard selector
// (nil: every object) and the generation of the selection it was read at.
type view struct {
	selector   sharding.Selector
	generation uint64
}

// shardSelector is the selector's wire form for
// metav1.ListOptions.ShardSelector; "" for every object.
func (v view) shardSelector() string {
	if v.selector == nil {
		return ""
	}
	return v.selector.String()
}

// Listing is what a whole list (or WatchList stream) delivered.
type Listing struct {
	// Selector is the shard selector it was made with (nil: every
	// object), and Generation the selection's generation.
	Selector   sharding.Selector
	Generation uint64
	// ResourceVersion is the list's.
	ResourceVersion string
	// Keys are the cache keys of its objects, kept only once the
	// selection has changed (Generation > 0), for a reshard's wait.
	Keys []string
}

func newShardFilter(selection func() (sharding.Selector, uint64, <-chan struct{})) *shardFilter {
	return &shardFilter{selection: selection, listedChanged: make(chan struct{})}
}

// current returns the selection to request now and a channel closed when
// it changes.
func (f *shardFilter) current() (view, <-chan struct{}) {
	selector, generation, changed := f.selection()
	if selector != nil && selector.Empty() {
		selector = nil
	}
	return view{selector: selector, generation: generation}, changed
}

// forListPage sets the ShardSelector of a list page request and returns the
// selection it was made with.
func (f *shardFilter) forListPage(options *metav1.ListOptions) view {
	f.mu.Lock()
	defer f.mu.Unlock()
	if options.Continue == "" {
		f.paging, _ = f.current()
	}
	options.ShardSelector = f.paging.shardSelector()
	return f.paging
}

// forWatch sets the ShardSelector of a watch request, and returns the
// selection and a channel closed when the selection changes. A plain
// watch (not WatchList) continues the last list: it is made at that list's
// selection, and if the selection has changed since (a reshard step came
// between the list and the watch), the channel is closed already, so that
// the watch moves to the new selection at once (reselect.go).
func (f *shardFilter) forWatch(options *metav1.ListOptions) (v view, changed <-chan struct{}) {
	v, changed = f.current()
	if options.SendInitialEvents == nil || !*options.SendInitialEvents {
		f.mu.Lock()
		if f.hasListed && f.listed.Generation != v.generation {
			v, changed = view{selector: f.listed.Selector, generation: f.listed.Generation}, closed
		}
		f.mu.Unlock()
	}
	options.ShardSelector = v.shardSelector()
	return v, changed
}

// closed is a channel closed from the start.
var closed = func() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}()

// keeps reports whether t belongs to the selection v.
func (f *shardFilter) keeps(v view, t runtime.Object) (bool, error) {
	if v.selector == nil {
		return true, nil
	}
	return v.selector.Matches(t)
}

// listedWith records that a whole list (or WatchList's initial events) made
// with selection v at resourceVersion rv, of the objects keys returns, was
// delivered.
func (f *shardFilter) listedWith(v view, rv string, keys func() []string) {
	last := Listing{Selector: v.selector, Generation: v.generation, ResourceVersion: rv}
	if v.generation > 0 {
		last.Keys = keys()
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.listed, f.hasListed, f.failing = last, true, false
	f.changedLocked()
}

// listFailed records that a whole list (or WatchList stream) was answered
// with an error: the reflector lists again, by itself, with its backoff,
// under the selection current then.
func (f *shardFilter) listFailed() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.failing {
		f.failing = true
		f.changedLocked()
	}
}

// changedLocked wakes the waiters of lastListed; f.mu is held.
func (f *shardFilter) changedLocked() {
	close(f.listedChanged)
	f.listedChanged = make(chan struct{})
}

// lastListed returns the last whole list, whether there was one, and a
// channel closed when there is another, or another failed.
func (f *shardFilter) lastListed() (last Listing, ok bool, next <-chan struct{}) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.listed, f.hasListed, f.listedChanged
}

// listFailing reports whether the last whole list was answered with an
// error.
func (f *shardFilter) listFailing() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.failing
}

// checkList notices a list response to a sharded request that does not
// echo the selector in metadata.shardInfo.
func (f *shardFilter) checkList(ctx context.Context, list runtime.Object, v view) {
	if v.selector == nil {
		return
	}
	if echoed, ok := shardInfoOf(list); !ok || echoed != v.shardSelector() {
		f.filterOnClient(ctx, "the list response has no metadata.shardInfo echoing the ShardSelector")
	}
}

// filterOnClient records, once, that the server ignores the selector.
func (f *shardFilter) filterOnClient(ctx context.Context, why string) {
	if f.onClientSide.CompareAndSwap(false, true) {
		klog.FromContext(ctx).Info("The API server does not apply the ShardSelector (is the ShardedListAndWatch feature gate off?); the informer filters its shard on the client",
			"reason", why)
	}
}

// shardInfoOf returns the selector a list response says it was filtered
// by, if it says.
func shardInfoOf(list runtime.Object) (string, bool) {
	if u, ok := list.(*unstructured.UnstructuredList); ok {
		selector, found, err := unstructured.NestedString(u.Object, "metadata", "shardInfo", "selector")
		return selector, found && err == nil
	}
	if l, ok := list.(interface{ GetShardInfo() *metav1.ShardInfo }); ok {
		if info := l.GetShardInfo(); info != nil {
			return info.Selector, true
		}
	}
	return "", false
}

// shardChangedMessage ends a watch whose selection is no longer the
// informer's.
const shardChangedMessage = "generic: the informer's shard changed; relist"

// relistEvent is a 410 Gone watch event (apierrors' ResourceExpired), which
// makes the reflector end the watch and relist: how the served guard
// resumes a resource served again and how a shard change takes effect.
func relistEvent(message string) watch.Event {
	return watch.Event{Type: watch.Error, Object: &apierrors.NewResourceExpired(message).ErrStatus}
}

// inShard reports whether t belongs to the selection a request was made
// with. An object outside it means the server ignored the selector.
func (in *ingest[T]) inShard(ctx context.Context, v view, t T) bool {
	keep, err := in.shard.keeps(v, t)
	if err != nil {
		in.rejectKey(ctx, cache.ObjectName{Namespace: t.GetNamespace(), Name: t.GetName()}, fmt.Errorf("shard: %w", err))
		return false
	}
	if !keep {
		in.shard.filterOnClient(ctx, "a watch or list delivered an object outside the shard")
	}
	return keep
}

// outOfShard handles a watch event whose object is outside the watch's
// shard (the server ignored the selector): it deletes an object the
// informer holds (one that was in the shard before a reshard), which must
// leave; any other is handed on as a bookmark at its resource version, so
// that the cache's resource version moves as the server's does and a wait
// for a write to another shard (WaitForWrite) ends with it, not at the
// server's next bookmark, a minute later.
func (s *watchStream[T]) outOfShard(event watch.Event, key cache.ObjectName, t T) (watch.Event, commitFunc, bool) {
	if _, known := s.get(key); !known {
		return s.bookmarkAt(t.GetResourceVersion())
	}
	event.Type = watch.Deleted
	event.Object = t
	return event, func() func() { return s.removeUndoably(key) }, true
}

// bookmarkAt is a bookmark at resource version rv, or nothing if T cannot
// be allocated or rv is empty.
func (s *watchStream[T]) bookmarkAt(rv string) (watch.Event, commitFunc, bool) {
	if s.in.newT == nil || rv == "" {
		return watch.Event{}, nil, false
	}
	bookmark := s.in.newT()
	bookmark.SetResourceVersion(rv)
	return watch.Event{Type: watch.Bookmark, Object: bookmark}, nil, true
}
