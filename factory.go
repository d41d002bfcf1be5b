package generic

import (
	"context"
	"errors"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
)

// Factory hands out one shared Informer[T] per GroupVersionResource and
// starts, syncs and stops them as a unit, as client-go's shared informer
// factories do.
//
// The zero Factory is not usable; call NewFactory. A Factory is safe for
// concurrent use.
type Factory[T Object] struct {
	source  Source
	convert Converter[T]
	opts    []Option
	// namespace and tweak are the resolved list/watch options, handed to the
	// source; the informer options are resolved again by NewInformer.
	namespace string
	tweak     TweakListOptionsFunc

	mu        sync.Mutex
	informers map[schema.GroupVersionResource]*entry[T]
	// retired holds, per resource, the last informer that stopped for good
	// (WithStopWhenNotServed) and was replaced while its Run went on: its
	// handlers may still be receiving the deletes it delivered, which
	// cancelling it would drop. It makes no requests; it is cancelled when
	// the next informer of its resource retires, at the last Release, or
	// at Shutdown.
	retired      map[schema.GroupVersionResource]*entry[T]
	shuttingDown bool
	// wg counts the goroutines Start started, so that Shutdown can wait.
	wg sync.WaitGroup
}

// entry is one informer of a Factory and how it runs.
type entry[T Object] struct {
	informer Informer[T]
	// holders counts the ForResource calls not yet Released.
	holders int
	// cancel stops the informer; nil until Start ran it.
	cancel context.CancelFunc
	// done is closed when the informer's Run has returned.
	done chan struct{}
}

// stopped reports whether the informer has stopped or will make no more
// requests (State Stopped).
//
// It reads channels only, never calls the informer's Status (which may call
// a StateHandler), so that it is safe under f.mu.
func (e *entry[T]) stopped() bool {
	select {
	case <-e.stoppedState():
		return true
	case <-e.done: // nil until started: never ready
		return true
	default:
		return false
	}
}

func (e *entry[T]) started() bool { return e.cancel != nil }

// running reports whether the informer was started and its Run has not
// returned.
func (e *entry[T]) running() bool {
	if !e.started() {
		return false
	}
	select {
	case <-e.done:
		return false
	default:
		return true
	}
}

// cancelIfStarted cancels the informer without waiting for it.
func (e *entry[T]) cancelIfStarted() {
	if e != nil && e.cancel != nil {
		e.cancel()
	}
}

// stoppedState is closed when the informer's State becomes Stopped, which
// with WithStopWhenNotServed happens while its Run goes on.
func (e *entry[T]) stoppedState() <-chan struct{} {
	if in, ok := e.informer.(*informer[T]); ok {
		return in.status.stoppedChan()
	}
	return nil
}

// NewFactory returns a Factory whose informers list and watch through source
// and convert what it delivers with convert (nil: source delivers T; see
// NewInformer). The Options apply to every informer.
//
// A nil source is not an error here: the informers' lists fail with a clear
// error, they never sync, and WaitForCacheSync returns false for them when
// its context ends.
func NewFactory[T Object](source Source, convert Converter[T], opts ...Option) *Factory[T] {
	if source == nil {
		source = func(schema.GroupVersionResource, string, TweakListOptionsFunc) cache.ListerWatcher {
			return FailingListerWatcher(errors.New("generic: nil Source"))
		}
	}
	o := resolveOptions(opts)
	// The namespace index comes first so that an indexer of the same name
	// given in opts replaces it.
	namespaceIndex := WithIndexers(cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	return &Factory[T]{
		source:    source,
		convert:   convert,
		opts:      append([]Option{namespaceIndex}, opts...),
		namespace: o.namespace,
		tweak:     o.tweakListOptions,
		informers: map[schema.GroupVersionResource]*entry[T]{},
		retired:   map[schema.GroupVersionResource]*entry[T]{},
	}
}

// ForResource returns the shared informer of gvr, creating it on first use,
// and counts one more holder of it (see Release). Calls with the same gvr
// return the same informer while it runs. Until Shutdown it never returns a
// stopped informer: one that has stopped (its Start context ended, or it
// stopped for good because its resource is no longer served) is replaced by
// a fresh informer, which the next Start runs; the count of holders carries
// over. After Shutdown it returns the factory's informers as they are
// (stopped), and new ones that nothing will start.
//
// Each call is a hold: code that calls ForResource(gvr) at every use, as is
// common with client-go's factories, should call it once and keep the
// Informer if it means to Release it.
//
// An informer that stopped for good is replaced without being cancelled:
// its handlers may still be receiving the deletes it delivered (ForResource
// may be called from those very handlers), and cancelling it would drop the
// rest. It makes no requests and holds no objects; it is cancelled when the
// next informer of gvr is replaced in turn, at the last Release of gvr, or
// at Shutdown, which waits for it. Deletes its handlers have not taken by
// then are dropped: client-go's processor cannot tell when they are done.
func (f *Factory[T]) ForResource(gvr schema.GroupVersionResource) Informer[T] {
	informer, previous := f.acquire(gvr)
	previous.cancelIfStarted()
	return informer
}

// acquire takes a hold on the informer of gvr, making it if needed. If it
// replaced a stopped informer whose Run goes on, that one is kept as
// retired, and the one retired before it is returned, to be cancelled.
func (f *Factory[T]) acquire(gvr schema.GroupVersionResource) (Informer[T], *entry[T]) {
	f.mu.Lock()
	defer f.mu.Unlock()
	e, ok := f.informers[gvr]
	var retired *entry[T]
	if ok && e.stopped() && !f.shuttingDown {
		retired, ok = e, false
	}
	if !ok {
		lw := f.source(gvr, f.namespace, f.tweak)
		e = &entry[T]{informer: NewInformer(lw, gvr, f.convert, f.opts...)}
		if retired != nil {
			e.holders = retired.holders
		}
		f.informers[gvr] = e
	}
	e.holders++
	if retired == nil || !retired.running() {
		return e.informer, nil
	}
	previous := f.retired[gvr]
	f.retired[gvr] = retired
	return e.informer, previous
}

// Release drops one hold on the informer of gvr. When the last hold is
// dropped, the informer stops, Release waits until its goroutines have
// ended, the informer leaves the factory and Release returns true; a later
// ForResource creates a fresh informer. Release of a gvr the factory has no
// informer for returns false and changes nothing.
//
// Handlers registered on a released informer get no more events. Since
// Release waits for the informer's goroutines, a handler of that informer
// must not release it. A previous informer of gvr that stopped for good
// and is still delivering (see ForResource) is cancelled too, without
// waiting: Shutdown waits for it.
//
// This is an extension: client-go's shared informer factories cannot stop
// one informer without stopping them all.
func (f *Factory[T]) Release(gvr schema.GroupVersionResource) bool {
	f.mu.Lock()
	e, ok := f.informers[gvr]
	if !ok {
		f.mu.Unlock()
		return false
	}
	e.holders--
	if e.holders > 0 {
		f.mu.Unlock()
		return false
	}
	delete(f.informers, gvr)
	retired := f.retired[gvr]
	delete(f.retired, gvr)
	f.mu.Unlock()
	retired.cancelIfStarted()
	e.stop()
	return true
}

// stop cancels the informer, if it runs, and waits for its Run to return.
func (e *entry[T]) stop() {
	if !e.started() {
		return
	}
	e.cancel()
	<-e.done
}

// Statuses reports the Status of every informer of the factory, started or
// not, keyed by resource.
func (f *Factory[T]) Statuses() map[schema.GroupVersionResource]Status {
	f.mu.Lock()
	informers := make(map[schema.GroupVersionResource]Informer[T], len(f.informers))
	for gvr, e := range f.informers {
		informers[gvr] = e.informer
	}
	f.mu.Unlock()
	// Status may call the StateHandler, which may call back into f.
	statuses := make(map[schema.GroupVersionResource]Status, len(informers))
	for gvr, informer := range informers {
		statuses[gvr] = informer.Status()
	}
	return statuses
}

// Start runs every informer that is not running yet, each in its own
// goroutine, until ctx ends or Shutdown is called. It does not block, may be
// called any number of times, and does nothing after Shutdown. A nil ctx is
// taken as context.Background().
func (f *Factory[T]) Start(ctx context.Context) {
	if ctx == nil {
		ctx = context.Background()
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.shuttingDown {
		return
	}
	for _, e := range f.informers {
		if !e.started() {
			f.run(ctx, e)
		}
	}
}

// run starts one informer; f.mu must be held.
func (f *Factory[T]) run(ctx context.Context, e *entry[T]) {
	runCtx, cancel := context.WithCancel(ctx)
	e.cancel = cancel
	e.done = make(chan struct{})
	f.wg.Go(func() {
		defer close(e.done)
		defer cancel()
		e.informer.Run(runCtx)
	})
}

// WaitForCacheSync waits until every started informer has synced, or ctx
// ends, and reports for each started informer whether it synced, as
// client-go's factories do. It returns as soon as ctx ends (it does not
// poll), and also stops waiting for an informer that has stopped. Informers
// not yet started are not in the map. WaitForCacheSyncError says why an
// informer did not sync.
func (f *Factory[T]) WaitForCacheSync(ctx context.Context) map[schema.GroupVersionResource]bool {
	if ctx == nil {
		ctx = context.Background()
	}
	started := f.startedInformers()
	synced := make(map[schema.GroupVersionResource]bool, len(started))
	for gvr, e := range started {
		synced[gvr] = waitForSync(ctx, e)
	}
	return synced
}

// WaitForCacheSyncError waits until every started informer has synced or
// ctx ends. It returns nil if all synced, else a *SyncError naming each
// resource that did not and why: its Status (NotServed, Forbidden, still
// Syncing at the deadline, Stopped) and last error. If ctx ended, the
// *SyncError wraps ctx's error (errors.Is(err, context.DeadlineExceeded));
// if the informers stopped first (Release, Shutdown, WithStopWhenNotServed),
// its Err is nil.
//
// An informer that is Forbidden or NotServed keeps trying, so give ctx a
// deadline: with context.Background() this waits until it syncs.
func (f *Factory[T]) WaitForCacheSyncError(ctx context.Context) error {
	if ctx == nil {
		ctx = context.Background()
	}
	var unsynced []Status
	for gvr, e := range f.startedInformers() {
		if !waitForSync(ctx, e) {
			status := e.informer.Status()
			status.GVR = gvr
			unsynced = append(unsynced, status)
		}
	}
	if len(unsynced) == 0 {
		return nil
	}
	return newSyncError(unsynced, ctx.Err())
}

func (f *Factory[T]) startedInformers() map[schema.GroupVersionResource]*entry[T] {
	f.mu.Lock()
	defer f.mu.Unlock()
	started := make(map[schema.GroupVersionResource]*entry[T], len(f.informers))
	for gvr, e := range f.informers {
		if e.started() {
			started[gvr] = e
		}
	}
	return started
}

func waitForSync[T Object](ctx context.Context, e *entry[T]) bool {
	synced := e.informer.Informer().HasSyncedChecker().Done()
	select {
	case <-synced:
		return true
	case <-ctx.Done():
	case <-e.done:
	case <-e.stoppedState():
	}
	// select picks at random among ready cases: look once more.
	select {
	case <-synced:
		return true
	default:
		return false
	}
}

// Shutdown stops every informer the Factory started and returns when all
// their goroutines have ended. After Shutdown, Start does nothing. It may be
// called any number of times, also concurrently.
//
// Unlike client-go's factories, whose Shutdown only waits for the stop
// channel given to Start to close, Shutdown stops the informers itself.
func (f *Factory[T]) Shutdown() {
	f.mu.Lock()
	f.shuttingDown = true
	for _, e := range f.informers {
		e.cancelIfStarted()
	}
	for _, e := range f.retired {
		e.cancelIfStarted()
	}
	f.mu.Unlock()
	f.wg.Wait()
}
