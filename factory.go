package generic

import (
	"fmt"
	"slices"
	"sync"

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
	if _, err := compactCodecFor[T](r.options); err != nil {
		return nil, err
	}
	return &Factory[T]{Registry: r, source: source, convert: convert, view: r.views.Add(1)}, nil
}

// Handle is one hold on a Factory's shared informer: the Informer itself,
// Release, which drops exactly this hold, once, and Done, closed when the
// informer has ended for this hold.
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

type handle[T Object] struct {
	*informer[T]
	registry *Registry
	entry    *entry
	once     sync.Once
}

func (h *handle[T]) Release() bool {
	released := false
	h.once.Do(func() { released = h.registry.informers.Release(h.entry) })
	return released
}

func (h *handle[T]) Done() <-chan struct{} { return h.entry.Gone() }

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
// opts, the informer's own Options, follow the Registry's and override
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
func (f *Factory[T]) Acquire(gvr schema.GroupVersionResource, opts ...InformerOption) (Handle[T], error) {
	e, i, err := f.acquire(gvr, opts)
	if err != nil {
		return nil, err
	}
	return &handle[T]{informer: i, registry: f.Registry, entry: e}, nil
}

// acquire takes a hold on the informer of gvr and the selection opts make,
// making it if needed, and runs it if the Registry has started.
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
		if _, err := compactCodecFor[T](o); err != nil {
			return nil, nil, err
		}
	}
	key := f.keyOf(gvr, o, own)
	e := f.informers.Acquire(key, func() runner { return f.newInformer(key, o) })
	i, ok := e.Runner.(*informer[T])
	if !ok { // the view's keys name its own informers, all of T
		f.informers.Release(e)
		return nil, nil, fmt.Errorf("generic: informer of %s in view %d is a %T, not of %T", gvr, f.view, e.Runner, i)
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
