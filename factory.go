package generic

import (
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Factory hands out one shared Informer[T] per GroupVersionResource and
// selection. It is a view of a Registry: the informers it hands out are the
// Registry's, and its lifecycle methods (Start, WaitForCacheSync,
// Statuses, Shutdown, Shard, BeginReshard, Reshard, Membership,
// RemoveResource) are the Registry's, which act on every informer of the
// Registry, of every view, as client-go's shared informer factories do on
// theirs.
//
// The zero Factory is not usable; call NewFactory, or NewFactoryOn for a
// view of a Registry shared with other kinds. A Factory is safe for
// concurrent use. Its informers' callbacks (event handlers, ErrorHandler,
// StateHandler) may call any of its methods but Shutdown, which waits for
// them (see Registry.Shutdown).
type Factory[T Object] struct {
	*Registry
	source  Source
	convert Converter[T]
	// view names the Factory's informers in the Registry, apart from
	// those of its other views (another T, or another source of T).
	view uint64
}

// informerKey names one informer of a Registry: the view that made it, its
// resource and the selection of objects it lists and watches. The same
// resource with another namespace or selector is another informer.
type informerKey struct {
	view                                    uint64
	gvr                                     schema.GroupVersionResource
	namespace, labelSelector, fieldSelector string
	// ownShard is the shard given to the informer itself (WithShard on
	// Acquire), as Shard.String writes it; "" for the registry's shard.
	ownShard string
	shardKey ShardKey
}

// NewFactory returns a Factory, over a Registry of its own, whose
// informers list and watch through source and convert what it delivers
// with convert (nil: source delivers T; see NewInformer). It is
// NewRegistry(opts...) and NewFactoryOn; the Options apply to every
// informer, and an invalid one (see each) is an error, and nothing is made.
//
// A nil source is not an error here: the informers' lists fail with a clear
// error, they never sync, and WaitForCacheSync says so when its context
// ends.
func NewFactory[T Object](source Source, convert Converter[T], opts ...FactoryOption) (*Factory[T], error) {
	r, err := NewRegistry(opts...)
	if err != nil {
		return nil, err
	}
	return NewFactoryOn(r, source, convert)
}

// NewFactoryOn returns a view of r that hands out informers of T, which
// list and watch through source and convert what it delivers with convert
// (nil: source delivers T). Its informers are r's: r's Options apply to
// them, r starts, syncs, reshards and stops them with every other view's.
// Each view shares its own informers: two views of one r (even of the same
// T) never share one. A nil r is an error.
func NewFactoryOn[T Object](r *Registry, source Source, convert Converter[T]) (*Factory[T], error) {
	if r == nil {
		return nil, errNilRegistry
	}
	if source == nil {
		source = nilSource
	}
	// A view of an interface T (typed.InformerForKind's) learns its
	// objects' type at each Acquire (WithExampleObject): its compact
	// store is checked there.
	if _, err := newObjectFunc[T](); err == nil {
		if _, err := compactCodecFor[T](r.options); err != nil {
			return nil, err
		}
	}
	return &Factory[T]{Registry: r, source: source, convert: convert, view: r.views.Add(1)}, nil
}

// Handle is one hold on a Factory's shared informer: the Informer itself,
// Release, which drops exactly this hold, once, and Done, closed when the
// informer has ended for this hold.
//
// A hold outlives the informer it was taken on: when that informer stops
// and a fresh one replaces it (see Acquire: the next Start or Acquire
// after the Start context ended, or after it stopped for good), the hold
// carries over, and the Handle's Informer[T] methods act on the informer
// that holds it now, found at each call:
//
//   - Lister: each Get, List and ByIndex (of Namespace(ns) too) reads the
//     cache of the informer that holds the hold at that moment, so a
//     Lister kept from before the replacement reads the replacement. Once
//     that informer has stopped and nothing replaced it yet (its Start
//     context ended and no Start since, it stopped for good, or the hold
//     ended: Release, RemoveResource, Shutdown), reads fail with an error
//     wrapping ErrInformerStopped instead of returning a cache that no
//     longer follows the server. A fresh replacement's cache fills as it
//     lists: HasSynced is false until then, as after the first Start.
//   - Status, HasSynced, Ownership, WaitForResourceVersion, WaitForWrite,
//     WaitForDelete, Run: the informer that holds the hold when called (a
//     wait that its informer's stop ends returns ErrInformerStopped; call
//     it again to wait on the replacement).
//   - Informer: the shared informer that holds the hold when called.
//     What is taken from it (its store or indexer, a method value, a
//     registration) is that informer's, as in client-go, and does not
//     follow a replacement: take it again, or read through Lister.
//   - AddEventHandler adds the handler to the informer that holds the hold
//     when called. A handler is not moved to a replacement: it stays with
//     the informer it was added to, which calls it no more once stopped,
//     as client-go's informers do. (Moving it would have it called by two
//     informers at once for a while, the old one's last events racing the
//     new one's initial list, and it would never hear of the objects
//     deleted while no informer ran.) Add handlers again after a restart,
//     as package controller does each time a Controller is made and run.
//   - AddIndexers adds to the informer that holds the hold, and to every
//     informer that replaces it: indexes, however added (AddIndexers,
//     Informer().AddIndexers, a later Acquire's WithIndexers), and a
//     transform set with Informer().SetTransform, are kept for the
//     replacements. (Indexers added to Informer().GetIndexer() directly
//     are that store's only.)
//
// Reading the hold's informer costs an atomic load and a type assertion
// per call; a Handle is safe for concurrent use.
type Handle[T Object] interface {
	Informer[T]
	// Release drops this hold; later calls do nothing and return false.
	// When it was the informer's last hold, the informer stops and
	// Release returns true. It does not wait for the informer's
	// goroutines (Done says when they have ended, Shutdown waits for
	// them), so it may be called from anywhere, the informer's own
	// callbacks included.
	Release() bool
	// Done returns a channel that is closed once the informer this hold
	// keeps (or the one that replaced it, see Acquire) no longer runs
	// for it and every goroutine of its run has ended: after its last
	// hold was released, after Registry.RemoveResource of its resource,
	// or after Shutdown. Released while other holds keep the informer
	// running, Done stays open until those end too. An informer that was
	// never started is done as soon as it leaves the Registry.
	Done() <-chan struct{}
}

// Acquire returns a Handle on the shared informer of gvr, creating it on
// first use; every Acquire of the same gvr and selection shares it while it
// runs, and each is one hold. Release the Handle when done with it;
// releasing it twice drops one hold only, so code that acquires an
// informer at every reconcile and releases it after cannot leak holds.
// A gvr without a version or a resource (the empty one among them) is an
// error naming it; the group may be empty (the core group).
//
// Until Shutdown it never hands out a stopped informer: one that has
// stopped or is stopping (its Start context ended, it stopped for good
// because its resource is no longer served, or whoever ran it by hand
// stopped it) is replaced by a fresh one, made as the stopped one is now
// (its Options, with the indexes and transform added since), and the holds
// carry over: every Handle of the stopped one reads the fresh one (see
// Handle). Start replaces them too, so that a Handle kept across a restart
// (Start, the end of its context, Start again) reads a running informer.
// After Start, a new informer runs at once under Start's context. After
// Shutdown it hands out the factory's informers as they are (stopped),
// and new ones that nothing will start.
//
// opts, the informer's own Options, follow the Registry's and override
// them, as controller-runtime's cache.ByObject does: WithNamespace,
// WithLabelSelector, WithFieldSelector, WithTweakListOptions,
// WithTransform, WithStripManagedFields, WithCompactStore, WithIndexers,
// WithResyncPeriod, WithShard, WithShardKey, WithStopWhenNotServed,
// WithErrorHandler, WithStateHandler, WithMetricsProvider,
// WithInformerName. The namespace, the selectors (in one written form:
// "b=2,a=1" is "a=1,b=2") and the shard name the informer: the same gvr
// with another selection is another informer, with a cache of its own. An
// invalid option is an error, and nothing is acquired.
//
// A later Acquire of the same selection shares the informer only if its
// Options (its own over the Registry's) can be honoured on it:
//
//   - an index the informer lacks (WithIndexers) is added to it, running
//     or not (or, if it has just stopped, to the replacement the hold
//     moves to), and kept for its replacements; an index it has with the
//     same function is shared; one it has with another function is
//     refused;
//   - every other option cannot change on a running informer: a
//     WithTransform, WithStripManagedFields, WithCompactStore,
//     WithResyncPeriod, WithTweakListOptions (compared by what the tweak
//     sets on an empty ListOptions, selectors aside), WithStopWhenNotServed,
//     WithErrorHandler, WithStateHandler, WithMetricsProvider (compared with
//     ==) or WithInformerName other than the informer's is refused.
//
// A refusal is an *OptionConflictError naming the option, the informer's
// setting and the one asked for; no hold is taken. Go cannot compare
// functions (transforms, index functions, handlers): two are the same only
// when they are provably the same function value, that is the same closure
// object: the same variable or named function passed again (and, as the gc
// compiler makes them, a function literal that captures nothing). A
// closure or method value made anew for each Acquire is another value, and
// refused even when it would behave the same: make it once and pass that
// value. Nothing that may behave differently is ever taken for the same.
// For an informer of its own with other settings, acquire from another
// view of the Registry (NewFactoryOn).
//
// An informer that stopped for good is replaced without being cancelled:
// its handlers may still be receiving the deletes it delivered (Acquire
// may be called from those very handlers), and cancelling it would drop
// the rest. It makes no requests and holds no objects; it is cancelled
// when the next informer of gvr is replaced in turn, at the last Release,
// or at Shutdown, which waits for it. Deletes its handlers have not taken
// by then are dropped: client-go's processor cannot tell when they are
// done.
func (f *Factory[T]) Acquire(gvr schema.GroupVersionResource, opts ...InformerOption) (Handle[T], error) {
	if err := checkGVR(gvr); err != nil {
		return nil, err
	}
	e, i, err := f.acquire(gvr, opts)
	if err != nil {
		return nil, err
	}
	return newHandle(f.Registry, e, i), nil
}

// checkGVR refuses a resource no informer can list: one without a version
// or a resource name (the empty GroupVersionResource among them). The
// group may be empty: the core group's.
func checkGVR(gvr schema.GroupVersionResource) error {
	if gvr.Version == "" || gvr.Resource == "" {
		return fmt.Errorf("generic: GroupVersionResource %#v: want a version and a resource (the group may be empty, for the core group)", gvr)
	}
	return nil
}

// acquire takes a hold on the informer of gvr and the selection opts make,
// making it if needed, and runs it if the Registry has started. An
// informer made by an earlier Acquire is shared if the Options asked for
// can be honoured on it (informerSettings.admit): else the hold is
// dropped and the error names the option.
func (f *Factory[T]) acquire(gvr schema.GroupVersionResource, opts []InformerOption) (*entry, *informer[T], error) {
	o, own := f.options, ""
	if len(opts) > 0 {
		informerOnly, err := resolveOptions(factoryOptions(opts))
		if err != nil {
			return nil, nil, err
		}
		if informerOnly.shard != nil {
			own = informerOnly.shard.String()
		}
		if o, err = resolveOptions(append(slices.Clip(f.opts), factoryOptions(opts)...)); err != nil {
			return nil, nil, err
		}
	}
	if _, err := compactCodecFor[T](o); err != nil {
		return nil, nil, err
	}
	key := f.keyOf(gvr, o, own)
	settings := newInformerSettings[T](o)
	e := f.informers.Acquire(key, func() runner { return f.newInformer(key, settings) })
	i, ok := e.Runner.(*informer[T])
	if !ok { // the view's keys name its own informers, all of T
		f.informers.Release(e)
		return nil, nil, fmt.Errorf("generic: informer of %s in view %d is a %T, not of %T", gvr, f.view, e.Runner, i)
	}
	if i.settings != settings { // made by an earlier Acquire: shared
		if err := i.settings.admit(o, key.selection(i)); err != nil {
			f.informers.Release(e)
			return nil, nil, err
		}
	}
	return e, i, nil
}

// keyOf names the informer of gvr that options o select, with own the
// informer's own shard ("" for the registry's).
func (f *Factory[T]) keyOf(gvr schema.GroupVersionResource, o options, own string) informerKey {
	return informerKey{view: f.view, gvr: gvr, namespace: o.namespace, labelSelector: o.labelSelector, fieldSelector: o.fieldSelector, ownShard: own, shardKey: o.shardKey}
}

// releaseOne drops one hold on the informer of gvr that acquire(gvr, nil)
// holds, and reports whether it was the last (see Handle.Release); false
// if there is none.
func (f *Factory[T]) releaseOne(gvr schema.GroupVersionResource) bool {
	return f.informers.ReleaseKey(f.keyOf(gvr, f.options, ""))
}

// newInformer makes the informer of key with settings as they are now,
// over the factory's Source: the first of key, or one that replaces a
// stopped one.
func (f *Factory[T]) newInformer(key informerKey, settings *informerSettings[T]) *informer[T] {
	return settings.make(func(o options) *informer[T] {
		lw := f.source(key.gvr, o.namespace, o.listTweak())
		shard := f.shard
		if key.ownShard != "" {
			shard = newShardState(*o.shard)
		}
		return newInformer(lw, key.gvr, f.convert, o, shard, selectionOf(o), f.served)
	})
}
