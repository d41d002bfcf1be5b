package generic

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	"github.com/generic-informers/generic/internal/registry"
)

// Factory hands out one shared Informer[T] per GroupVersionResource and
// starts, syncs and stops them as a unit, as client-go's shared informer
// factories do.
//
// The zero Factory is not usable; call NewFactory. A Factory is safe for
// concurrent use. Its informers' callbacks (event handlers, ErrorHandler,
// StateHandler) may call any of its methods but Shutdown, which waits for
// them (see Shutdown).
type Factory[T Object] struct {
	source  Source
	convert Converter[T]
	// opts are the factory-wide Options, which each informer's own (see
	// Acquire) follow and override; options is them resolved.
	opts    []Option
	options options
	// shard is the selection the informers of the factory's own shard
	// share, which Reshard moves (factory_shard.go), or the membership
	// (member, nil without WithMembership; factory_membership.go).
	shard  *shardState
	member *member
	// informers holds the informers, their holds and their runs
	// (internal/registry).
	informers *registry.Registry[informerKey, *informer[T]]
	// shutdownReportAfter is shutdownReportAfter but in tests
	// (export_test.go).
	shutdownReportAfter time.Duration
}

// informerKey names one informer of a Factory: its resource and the
// selection of objects it lists and watches. The same resource with another
// namespace or selector is another informer.
type informerKey struct {
	gvr                                     schema.GroupVersionResource
	namespace, labelSelector, fieldSelector string
	// ownShard is the shard given to the informer itself (WithShard on
	// Acquire), as Shard.String writes it; "" for the factory's shard.
	ownShard string
	shardKey ShardKey
}

// entry is one informer of a Factory and how it runs.
type entry[T Object] = registry.Entry[informerKey, *informer[T]]

// NewFactory returns a Factory whose informers list and watch through source
// and convert what it delivers with convert (nil: source delivers T; see
// NewInformer). The Options apply to every informer; an invalid one (see
// each) is an error, and nothing is made.
//
// A nil source is not an error here: the informers' lists fail with a clear
// error, they never sync, and WaitForCacheSync says so when its context
// ends.
func NewFactory[T Object](source Source, convert Converter[T], opts ...Option) (*Factory[T], error) {
	if source == nil {
		source = func(schema.GroupVersionResource, string, TweakListOptionsFunc) cache.ListerWatcher {
			return FailingListerWatcher(errors.New("generic: nil Source"))
		}
	}
	// The namespace index comes first so that an indexer of the same name
	// given in opts replaces it.
	opts = append([]Option{WithIndexers(cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})}, opts...)
	o, err := resolveOptions(opts)
	if err != nil {
		return nil, err
	}
	f := &Factory[T]{
		source:    source,
		convert:   convert,
		opts:      opts,
		options:   o,
		shard:     newShardState(o.shardOrAll()),
		member:    o.member,
		informers: registry.New[informerKey](func(ctx context.Context, i *informer[T]) { i.Run(ctx) }, (*informer[T]).stopped, o.deferredStart),

		shutdownReportAfter: shutdownReportAfter,
	}
	if f.member != nil {
		f.shard = f.member.shard
	}
	return f, nil
}

// Handle is one hold on a Factory's shared informer: the Informer itself,
// and Release, which drops exactly this hold, once.
type Handle[T Object] interface {
	Informer[T]
	// Release drops this hold; later calls do nothing and return false.
	// When it was the informer's last hold, the informer stops and
	// Release returns true. It does not wait for the informer's
	// goroutines (Shutdown does), so it may be called from anywhere, the
	// informer's own callbacks included.
	Release() bool
}

type handle[T Object] struct {
	*informer[T]
	factory *Factory[T]
	entry   *entry[T]
	once    sync.Once
}

func (h *handle[T]) Release() bool {
	released := false
	h.once.Do(func() { released = h.factory.informers.Release(h.entry) })
	return released
}

// Acquire returns a Handle on the shared informer of gvr, creating it on
// first use; every Acquire of the same gvr and selection shares it while it
// runs, and each is one hold. Release the Handle when done with it;
// releasing it twice drops one hold only, so code that acquires an
// informer at every reconcile and releases it after cannot leak holds.
//
// Until Shutdown it never hands out a stopped informer: one that has
// stopped (its Start context ended, it stopped for good because its
// resource is no longer served, or whoever ran it by hand stopped it) is
// replaced by a fresh one; the holds carry over. After Start, a new
// informer runs at once under Start's context. After Shutdown it hands out
// the factory's informers as they are (stopped), and new ones that nothing
// will start.
//
// opts, the informer's own Options, follow the factory's and override
// them, as controller-runtime's cache.ByObject does: WithNamespace,
// WithLabelSelector, WithFieldSelector, WithTweakListOptions,
// WithTransform, WithStripManagedFields, WithIndexers, WithResyncPeriod,
// WithShard, WithShardKey, the handlers. The namespace, the selectors and
// the shard name the informer: the same gvr with another selection is
// another informer, with a cache of its own. Other options take effect
// when the informer is made; later Acquires of the same selection share it
// as it is. An invalid option is an error, and nothing is acquired.
//
// An informer that stopped for good is replaced without being cancelled:
// its handlers may still be receiving the deletes it delivered (Acquire
// may be called from those very handlers), and cancelling it would drop
// the rest. It makes no requests and holds no objects; it is cancelled
// when the next informer of gvr is replaced in turn, at the last Release,
// or at Shutdown, which waits for it. Deletes its handlers have not taken
// by then are dropped: client-go's processor cannot tell when they are
// done.
func (f *Factory[T]) Acquire(gvr schema.GroupVersionResource, opts ...Option) (Handle[T], error) {
	e, err := f.acquire(gvr, opts)
	if err != nil {
		return nil, err
	}
	return &handle[T]{informer: e.Runner, factory: f, entry: e}, nil
}

// acquire takes a hold on the informer of gvr and the selection opts make,
// making it if needed, and runs it if the factory has started.
func (f *Factory[T]) acquire(gvr schema.GroupVersionResource, opts []Option) (*entry[T], error) {
	o, own := f.options, ""
	if len(opts) > 0 {
		informerOnly, err := resolveOptions(opts)
		if err != nil {
			return nil, err
		}
		if informerOnly.member != nil {
			return nil, errMembershipOfInformer
		}
		if informerOnly.shard != nil {
			own = informerOnly.shard.String()
		}
		if o, err = resolveOptions(append(slices.Clip(f.opts), opts...)); err != nil {
			return nil, err
		}
	}
	key := informerKey{gvr: gvr, namespace: o.namespace, labelSelector: o.labelSelector, fieldSelector: o.fieldSelector, ownShard: own, shardKey: o.shardKey}
	return f.informers.Acquire(key, func() *informer[T] { return f.newInformer(key, o) }), nil
}

// newInformer makes the informer of key with options o, over the
// factory's Source.
func (f *Factory[T]) newInformer(key informerKey, o options) *informer[T] {
	lw := f.source(key.gvr, o.namespace, o.listTweak())
	shard := f.shard
	if key.ownShard != "" {
		shard = newShardState(*o.shard)
	}
	return newInformer(lw, key.gvr, f.convert, o, shard, selectionOf(o))
}

// Statuses reports the Status of every informer of the factory, started or
// not, keyed by resource. Of a resource with informers of several
// selections (see Acquire), it reports one that is not Synced, if any.
func (f *Factory[T]) Statuses() map[schema.GroupVersionResource]Status {
	statuses := map[schema.GroupVersionResource]Status{}
	for _, e := range f.informers.Entries() {
		if seen, ok := statuses[e.Key.gvr]; !ok || seen.State == Synced {
			statuses[e.Key.gvr] = e.Runner.Status()
		}
	}
	return statuses
}

// Start runs every informer that is not running yet, each in its own
// goroutine, until ctx ends or Shutdown is called, and runs informers asked
// for later at once under ctx (unless withDeferredStart). It does not block,
// may be called any number of times, and does nothing after Shutdown. A
// nil ctx is taken as context.Background().
//
// With WithMembership, Start joins the membership's group instead: the
// informers start once it gave the replica its shard, and run until the
// replica has left, cleanly once ctx ends (see Membership.LeaveTimeout).
func (f *Factory[T]) Start(ctx context.Context) {
	if ctx == nil {
		ctx = context.Background()
	}
	if f.member != nil {
		f.member.start(ctx, f, f.options.metricsProvider)
		return
	}
	f.informers.Start(ctx)
}

// startInformers runs the informers not running yet under ctx.
func (f *Factory[T]) startInformers(ctx context.Context) { f.informers.Start(ctx) }

// WaitForCacheSync waits until every started informer has synced or ctx
// ends. It returns nil if all synced, else a *SyncError naming each
// resource that did not and why: its Status (NotServed, Forbidden, still
// Syncing at the deadline, Stopped) and last error. If ctx ended, the
// *SyncError wraps ctx's error (errors.Is(err, context.DeadlineExceeded));
// if the informers stopped first (Release, Shutdown, WithStopWhenNotServed),
// its Err is nil. It returns as soon as ctx ends (it does not poll), and
// also stops waiting for an informer that has stopped. Informers not yet
// started are not waited for.
//
// An informer that is Forbidden or NotServed keeps trying, so give ctx a
// deadline: with context.Background() this waits until it syncs.
//
// With WithMembership, it first waits until the replica has joined and
// its informers hold its shard; if ctx ends first, or the membership
// ends, it returns an error saying so.
func (f *Factory[T]) WaitForCacheSync(ctx context.Context) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if f.member != nil {
		if err := f.member.waitToJoin(ctx); err != nil {
			return err
		}
	}
	var unsynced []Status
	for _, e := range f.informers.Started() {
		if !waitForSync(ctx, e.Runner) {
			unsynced = append(unsynced, e.Runner.Status())
		}
	}
	if len(unsynced) == 0 {
		return nil
	}
	return newSyncError(unsynced, ctx.Err())
}

// waitForSync waits until the informer's cache is filled, it stops, or ctx
// ends, and reports whether the cache was filled.
func waitForSync[T Object](ctx context.Context, i *informer[T]) bool {
	synced := i.shared.HasSyncedChecker().Done()
	select {
	case <-synced:
		return true
	case <-ctx.Done():
	case <-i.machine.stoppedChan():
	}
	// select picks at random among ready cases: look once more.
	select {
	case <-synced:
		return true
	default:
		return false
	}
}

// Shutdown stops every informer the Factory started, released ones
// included, and returns when all their goroutines have ended. After
// Shutdown, Start does nothing. It may be called any number of times,
// also concurrently.
//
// Shutdown must not be called from a callback of the Factory's informers,
// as client-go's ShutDownEventHandler must not be called from the
// handler's own callbacks: it waits for the informers' goroutines, and an
// informer does not end until its callbacks have returned, the caller's
// among them, so such a call never returns. From a callback, cancel the
// context given to Start instead, which stops the informers without
// waiting, or Release; call Shutdown afterwards, outside the callbacks, to
// wait for them. Event handlers are client-go's, which cannot tell; of a
// StateHandler or ErrorHandler call that Shutdown has waited on for 5
// seconds, the informer's ErrorHandler is told, once, with an error
// wrapping ErrShutdownWaitsOnCallback (called directly: the callbacks
// goroutine is the one that does not return), so that such a Shutdown
// does not hang in silence.
//
// Unlike client-go's factories, whose Shutdown only waits for the stop
// channel given to Start to close, Shutdown stops the informers itself.
// Informers run by hand (Informer().Run) run until their caller stops them.
//
// With WithMembership, Shutdown first leaves the group cleanly (see
// Membership.LeaveTimeout), the informers running until the replica has
// left.
func (f *Factory[T]) Shutdown() {
	stopWatch := f.watchShutdown()
	defer stopWatch()
	if f.member != nil {
		f.member.stop()
	}
	f.informers.Shutdown()
}

// Membership returns where the replica stands in the factory's membership,
// and false without WithMembership.
func (f *Factory[T]) Membership() (MembershipStatus, bool) {
	if f.member == nil {
		return MembershipStatus{}, false
	}
	return f.member.status(), true
}
