package generic

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/sharding"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
)

// GenericInformerFactory is a Factory[T] in the shape of client-go's
// GVR-keyed factories, dynamicinformer.DynamicSharedInformerFactory and
// metadatainformer.SharedInformerFactory, with their behaviour: an
// informer asked for after Start runs at the next Start, and
// WaitForCacheSync polls every 100 ms (cache.WaitForCacheSync). The drop-in
// packages unstructured and metadata are made of it. It adds Release
// (Releaser). It is safe for concurrent use.
type GenericInformerFactory[T Object] struct {
	factory *Factory[T]

	mu sync.Mutex
	// shardSelector is SetShardSelector's, nil if none.
	shardSelector sharding.Selector
	// holds are the holds ForResource took, per resource, which Release
	// drops one at a time.
	holds map[schema.GroupVersionResource][]Handle[T]
}

// Releaser is what the GVR-keyed factories of this module add to
// client-go's API (GenericInformerFactory, and so the factories of the
// drop-in packages), which cannot stop one informer without stopping them
// all:
//
//	factory.(generic.Releaser).Release(gvr)
//
// Release drops one hold on the informer of gvr (each ForResource call is
// one); when the last is dropped the informer stops and Release returns
// true; a later ForResource makes a fresh informer. It returns false for a
// gvr with no informer. It does not wait for the informer's goroutines
// (Shutdown does), as Handle.Release.
type Releaser interface {
	Release(gvr schema.GroupVersionResource) bool
}

var _ Releaser = (*GenericInformerFactory[*metav1.PartialObjectMetadata])(nil)

// NewGenericInformerFactory returns a GenericInformerFactory whose
// informers list and watch through source, which delivers T, in namespace
// (metav1.NamespaceAll for all), with tweakListOptions (if not nil) applied
// to every request, as client-go's NewFilteredDynamicSharedInformerFactory
// does, each with the namespace index and resync period defaultResync (0:
// none), and, if transform is not nil, with it as WithTransform's
// (client-go's metadatainformer.WithTransform).
func NewGenericInformerFactory[T Object](source Source, defaultResync time.Duration, namespace string, tweakListOptions TweakListOptionsFunc, transform cache.TransformFunc) *GenericInformerFactory[T] {
	if tweakListOptions != nil {
		source = tweakedSource(source, tweakListOptions)
	}
	// These options cannot be invalid.
	factory, _ := NewFactory[T](source, nil, withDeferredStart(), withIngestSharing(dropInSharing[T]()),
		WithResyncPeriod(defaultResync), WithNamespace(namespace), WithTransform(transform))
	return &GenericInformerFactory[T]{factory: factory, holds: map[schema.GroupVersionResource][]Handle[T]{}}
}

// tweakedSource is source with tweak applied to every request after what
// the factory's Options set: client-go's factories apply their tweak in
// their informers' list and watch, and may set selectors with it.
func tweakedSource(source Source, tweak TweakListOptionsFunc) Source {
	return func(gvr schema.GroupVersionResource, namespace string, own TweakListOptionsFunc) cache.ListerWatcher {
		return source(gvr, namespace, func(options *metav1.ListOptions) {
			applyTweak(own, options)
			tweak(options)
		})
	}
}

// ForResource returns the shared informer of gvr, creating it on first
// use, and counts one more hold on it (see Release). Calls with the same
// gvr return the same informer while it runs; a stopped one is replaced
// by a fresh one, the holds carried over (see Factory.Acquire).
func (f *GenericInformerFactory[T]) ForResource(gvr schema.GroupVersionResource) informers.GenericInformer {
	e, i, _ := f.factory.acquire(gvr, nil) // no options: it cannot fail
	f.mu.Lock()
	f.holds[gvr] = append(f.holds[gvr], newHandle(f.factory.Registry, e, i))
	selector := f.shardSelector
	f.mu.Unlock()
	if selector != nil {
		// As client-go's factories: an informer started already keeps its
		// selection, and says so with an error nobody reads.
		_ = i.Informer().SetShardSelector(selector)
	}
	// Adapters of the same informer compare equal, as client-go's
	// ForResource returns the same value for the same informer.
	return NewGenericInformer[T](i)
}

// Release drops one hold on the informer of gvr (see Releaser).
func (f *GenericInformerFactory[T]) Release(gvr schema.GroupVersionResource) bool {
	f.mu.Lock()
	holds := f.holds[gvr]
	if len(holds) == 0 {
		f.mu.Unlock()
		return false
	}
	last := holds[len(holds)-1]
	f.holds[gvr] = holds[:len(holds)-1]
	if len(f.holds[gvr]) == 0 {
		delete(f.holds, gvr)
	}
	f.mu.Unlock()
	return last.Release()
}

// Start runs the informers not running yet until stopCh is closed or
// Shutdown is called.
func (f *GenericInformerFactory[T]) Start(stopCh <-chan struct{}) {
	f.StartWithContext(wait.ContextForChannel(stopCh))
}

// StartWithContext runs the informers not running yet until ctx ends or
// Shutdown is called.
func (f *GenericInformerFactory[T]) StartWithContext(ctx context.Context) { f.factory.Start(ctx) }

// WaitForCacheSync waits, as client-go's factories do
// (cache.WaitForCacheSync, every 100 ms), until each started informer has
// synced or stopCh is closed, and reports which synced. Unlike client-go's,
// it stops waiting for an informer that has stopped (released, say) and
// will never sync.
//
// It keeps client-go's timing, rather than returning the moment the caches
// sync as Factory.WaitForCacheSync does, because code written against
// client-go relies on it: client-go's own tests, for one, change objects
// through a fake client right after the wait, and the fake drops the
// events of changes made between an informer's list and its watch.
func (f *GenericInformerFactory[T]) WaitForCacheSync(stopCh <-chan struct{}) map[schema.GroupVersionResource]bool {
	return f.WaitForCacheSyncWithContext(wait.ContextForChannel(stopCh)).Synced
}

// WaitForCacheSyncWithContext is WaitForCacheSync until ctx ends, with
// client-go v0.38's result: Synced per resource, and Err, nil if every
// started informer synced, else context.Cause(ctx), or, if ctx has not
// ended (an informer stopped and will never sync), an error naming the
// resources that did not sync.
func (f *GenericInformerFactory[T]) WaitForCacheSyncWithContext(ctx context.Context) cache.GVRSyncResult {
	result := cache.GVRSyncResult{Synced: map[schema.GroupVersionResource]bool{}}
	var unsynced []string
	for _, e := range f.factory.informers.Started() {
		i := e.Runner
		cache.WaitForCacheSync(ctx.Done(), func() bool { return i.HasSynced() || i.stopped() })
		synced := i.HasSynced()
		result.Synced[e.Key.gvr] = synced
		if !synced {
			unsynced = append(unsynced, e.Key.gvr.String())
		}
	}
	if len(unsynced) > 0 {
		if result.Err = context.Cause(ctx); result.Err == nil {
			slices.Sort(unsynced)
			result.Err = fmt.Errorf("informers stopped before they synced: %s", strings.Join(unsynced, ", "))
		}
	}
	return result
}

// SetShardSelector gives every informer ForResource makes from now on the
// shard selector (cache.SharedIndexInformer.SetShardSelector, client-go's
// cache.NewShardedListWatch: the server filters, or the client where the
// server does not), as client-go v0.38's WithShardSelector factory option
// does; the drop-ins' WithShardSelector call it. nil or an empty selector
// selects every object.
func (f *GenericInformerFactory[T]) SetShardSelector(selector sharding.Selector) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.shardSelector = selector
}

// Shutdown stops the informers and waits for their goroutines, as
// Factory.Shutdown does (unlike client-go's, which waits for stopCh).
func (f *GenericInformerFactory[T]) Shutdown() { f.factory.Shutdown() }
