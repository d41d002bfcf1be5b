package generic

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
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
// shardInfo), logs it, and reports it in Status.ShardFilteredByClient.
//
// It also makes a change of shard (Factory.Reshard) take effect: a watch
// made at an older selection ends with 410 Gone, so the reflector relists
// with the new one, and its Replace delivers the objects that left the
// shard as deletes and those that joined as adds.
type shardFilter struct {
	state *shardState
	key   ShardKey
	// onClientSide is set once the server was seen to ignore the selector.
	onClientSide atomic.Bool

	mu sync.Mutex
	// paging is the selection of the list whose pages are being read: all
	// pages of one list use the selection of its first.
	paging shardView
	// listed is the selection the last whole list (or WatchList's initial
	// events) was made with, and listedRV that list's resourceVersion;
	// hasListed is false before the first.
	listed    shardView
	listedRV  string
	hasListed bool
	// listedKeys are the cache keys of that list's objects, kept only
	// once the shard has changed (generation > 0), for Reshard's wait.
	listedKeys []string
	// listedChanged is closed, and replaced, whenever listed changes.
	listedChanged chan struct{}
}

func newShardFilter(state *shardState, key ShardKey) *shardFilter {
	if key == "" {
		key = ShardByUID
	}
	return &shardFilter{state: state, key: key, listedChanged: make(chan struct{})}
}

// forListPage sets the ShardSelector of a list page request and returns the
// selection it was made with.
func (f *shardFilter) forListPage(options *metav1.ListOptions) shardView {
	f.mu.Lock()
	defer f.mu.Unlock()
	if options.Continue == "" {
		f.paging, _ = f.state.view(f.key)
	}
	options.ShardSelector = f.paging.ShardSelector()
	return f.paging
}

// forWatch sets the ShardSelector of a watch request, and returns the
// selection, a channel closed when the selection changes, and whether the
// watch would miss objects: a plain watch (not WatchList) made at a
// selection other than the last list's.
func (f *shardFilter) forWatch(options *metav1.ListOptions) (v shardView, changed <-chan struct{}, stale bool) {
	v, changed = f.state.view(f.key)
	options.ShardSelector = v.ShardSelector()
	if options.SendInitialEvents != nil && *options.SendInitialEvents {
		return v, changed, false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return v, changed, f.hasListed && f.listed.generation != v.generation
}

// keeps reports whether t belongs to the selection v.
func (f *shardFilter) keeps(v shardView, t runtime.Object) (bool, error) {
	if v.selector == nil {
		return true, nil
	}
	return v.selector.Matches(t)
}

// listedWith records that a whole list (or WatchList's initial events) made
// with selection v at resourceVersion rv, of the objects keys returns, was
// delivered.
func (f *shardFilter) listedWith(v shardView, rv string, keys func() []string) {
	var listedKeys []string
	if v.generation > 0 {
		listedKeys = keys()
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.listed, f.listedRV, f.hasListed, f.listedKeys = v, rv, true, listedKeys
	close(f.listedChanged)
	f.listedChanged = make(chan struct{})
}

// listing is what the last whole list delivered, for Reshard's wait.
type listing struct {
	selection shardView
	rv        string
	keys      []string
}

// lastListed returns the last whole list, whether there was one, and a
// channel closed when there is another.
func (f *shardFilter) lastListed() (last listing, ok bool, next <-chan struct{}) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return listing{selection: f.listed, rv: f.listedRV, keys: f.listedKeys}, f.hasListed, f.listedChanged
}

// checkList notices a list response to a sharded request that does not
// echo the selector in metadata.shardInfo.
func (f *shardFilter) checkList(ctx context.Context, list runtime.Object, v shardView) {
	if v.selector == nil {
		return
	}
	if echoed, ok := shardInfoOf(list); !ok || echoed != v.ShardSelector() {
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

// relistEvent is a 410 Gone watch event, which makes the reflector end the
// watch and relist: how the served guard resumes a resource served again
// and how a shard change takes effect.
func relistEvent(message string) watch.Event {
	return watch.Event{Type: watch.Error, Object: &metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    410,
		Reason:  metav1.StatusReasonExpired,
		Message: message,
	}}
}

// shardChangedEvent ends a watch whose selection is no longer the
// informer's.
func shardChangedEvent() watch.Event {
	return relistEvent("generic: the informer's shard changed; relist")
}

// eventWatch is a watch that delivers its events and ends.
func eventWatch(events ...watch.Event) watch.Interface {
	result := make(chan watch.Event, len(events))
	for _, e := range events {
		result <- e
	}
	close(result)
	return watch.NewProxyWatcher(result)
}

// describe describes an informer's shard for its Status: "" when it holds
// every object.
func (f *shardFilter) describe() string {
	current, widened := f.state.shard()
	if current.all() && widened == nil {
		return ""
	}
	if widened != nil {
		return fmt.Sprintf("%v+%v", current, *widened)
	}
	return current.String()
}

// inShard reports whether t belongs to the selection a request was made
// with. An object outside it means the server ignored the selector.
func (in *ingest[T]) inShard(ctx context.Context, v shardView, t T) bool {
	keep, err := in.shard.keeps(v, t)
	if err != nil {
		in.report(ctx, &ConversionError{GVR: in.gvr, Key: objectKey{namespace: t.GetNamespace(), name: t.GetName()}.String(), Err: fmt.Errorf("shard: %w", err)})
		return false
	}
	if !keep {
		in.shard.filterOnClient(ctx, "a watch or list delivered an object outside the shard")
	}
	return keep
}

// outOfShard handles a watch event whose object is outside the watch's
// shard: it is skipped, unless it deletes an object the informer holds
// (one that was in the shard before a reshard), which must leave.
func (s *watchStream[T]) outOfShard(ctx context.Context, event watch.Event, key objectKey, t T) (watch.Event, commitFunc, bool) {
	if _, known := s.get(key); !known {
		return event, nil, false
	}
	event.Type = watch.Deleted
	event.Object = t
	return event, func() func() { return s.removeUndoably(key) }, true
}
