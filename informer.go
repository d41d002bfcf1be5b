package generic

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	"github.com/generic-informers/generic/internal/callbacks"
	"github.com/generic-informers/generic/internal/compact"
	"github.com/generic-informers/generic/internal/handlers"
	"github.com/generic-informers/generic/internal/indexguard"
	"github.com/generic-informers/generic/internal/listwatch"
	"github.com/generic-informers/generic/internal/objectedit"
	"github.com/generic-informers/generic/internal/telemetry"
)

// Informer is a cache.SharedIndexInformer whose objects are all of type T,
// with a typed Lister, typed event handlers and typed indexers. No method
// needs a type assertion from its caller, and none panics on a value of
// another type: such values are reported to the ErrorHandler and dropped.
//
// The methods are safe for concurrent use.
type Informer[T Object] interface {
	// Informer returns the underlying shared informer, for code that takes
	// client-go types (cache.WaitForCacheSync, informers.GenericInformer).
	Informer() cache.SharedIndexInformer
	// Lister returns a Lister over the informer's cache.
	Lister() Lister[T]
	// AddEventHandler registers a typed handler, as client-go's
	// cache.TypedSharedIndexInformer.AddTypedEventHandler does, with at most
	// one HandlerOptions. Deletes reach OnDelete as a
	// cache.DeletedObject[T]: when the informer missed the delete event
	// (the object vanished between a watch and a relist), OptionalObj is
	// the last state it cached and FinalStateUnknown holds the tombstone.
	AddEventHandler(handler cache.TypedResourceEventHandler[T], options ...cache.HandlerOptions) (cache.ResourceEventHandlerRegistration, error)
	// AddIndexers adds typed index functions. As with client-go, indexers
	// added after the informer started are applied to the objects already
	// cached, a name the informer has already is an error ("indexer
	// conflict"), and so is any index on a stopped informer. An index
	// function that returns an error is reported as an *IndexError and
	// leaves that object out of that index; while it fails on any object,
	// every read of the index returns a *PartialIndexError beside what it
	// found. A Factory's informer keeps them for the informers that
	// replace it (see Handle).
	AddIndexers(indexers cache.TypedIndexers[T]) error
	// HasSynced reports whether the cache has been filled by a complete
	// initial list.
	HasSynced() bool
	// Run runs the informer until ctx ends and returns when it has stopped.
	// An informer runs at most once; a Factory calls Run for the informers
	// it hands out.
	Run(ctx context.Context)
	// GroupVersionResource returns the resource the informer watches.
	GroupVersionResource() schema.GroupVersionResource
	// Status reports the informer's State, its last error and when it
	// last synced.
	Status() Status

	// WaitForResourceVersion returns nil once this informer's cache (what
	// its Lister reads) has applied every event of its resource up to
	// resourceVersion, typically that of a write's response: the cache's
	// resource version (that of the last add, update, delete, relist or
	// watch bookmark it applied) is resourceVersion or later. It returns at
	// once if that is so already, even on a stopped informer. See
	// readyourwrites.go for how it waits (polling, at most every 10 ms).
	//
	// It does not wait for event handlers: client-go updates the cache
	// first, then hands the event to each handler, which runs
	// asynchronously; a handler may not have seen resourceVersion yet. It
	// says nothing of another resource's cache, nor of another informer of
	// the same resource (another selection or namespace): wait on each. An
	// informer not started yet is waited for, not refused.
	//
	// On a resource nobody writes, the cache's resource version moves only
	// with watch bookmarks (the reflector asks for them): kube-apiserver
	// sends one on each watch about once a minute, and 2 s before the watch
	// times out, at the resource version its watch cache has reached, which
	// on a quiet resource follows etcd's progress notifications (etcd's
	// --watch-progress-notify-interval; kubeadm sets 5 s). A resource
	// version from a write to another resource is therefore met within
	// about a minute, and only if both resources are stored in the same
	// etcd (the default); bound the wait with ctx.
	//
	// Errors: a *ResourceVersionError, at once, if resourceVersion or the
	// cache's is not a well-formed resource version (a decimal integer
	// without leading zeros; a server that does not promise comparable
	// resource versions); an error wrapping ErrInformerStopped if the
	// informer stops first; one wrapping ctx.Err() (errors.Is(err,
	// context.DeadlineExceeded)) if ctx ends first, naming the cache's
	// resource version and State; one wrapping
	// ErrResourceVersionNotTracked if client-go's feature gate AtomicFIFO
	// is off. Safe for concurrent use.
	WaitForResourceVersion(ctx context.Context, resourceVersion string) error
	// WaitForWrite returns nil once this informer's cache has applied the
	// write that returned obj (a create, update, patch or status update;
	// pass the object the server returned): once it has applied every
	// event up to obj's resourceVersion, as WaitForResourceVersion, and
	// then holds the object of obj's namespace/name at that resource
	// version or later, or does not hold it (deleted since). A Get from its
	// Lister then sees the write or a later state.
	//
	// An object that obj says is outside this informer's selection (another
	// namespace, labels its WithLabelSelector does not match, a
	// WithFieldSelector on metadata.name or metadata.namespace it fails,
	// another shard) is an event the server never sends this informer, so
	// nothing marks its cache's progress to obj's resourceVersion: the wait
	// is over once the cache holds no older state of the object (a write
	// that moved the object out of the selection comes as a delete at that
	// resource version), and a Get then answers NotFound. One case is left
	// open: an object that entered and left the selection after the last
	// event the cache applied may still appear in it, briefly, after the
	// wait returned, until the cache applies its delete.
	//
	// It returns an error if obj is nil or has no name or resourceVersion,
	// and if the cache holds the object at an older resource version
	// although it has applied every event up to obj's (obj is not of this
	// informer's resource); other errors as WaitForResourceVersion.
	WaitForWrite(ctx context.Context, obj T) error
	// WaitForDelete returns nil once this informer's cache has applied
	// every event up to obj's resourceVersion and holds no object of obj's
	// namespace/name and UID (with an empty UID: of that namespace/name):
	// a Get from its Lister then answers NotFound, or returns an object
	// recreated under that name. obj is the object as last read or written
	// before the delete (client-go's Delete returns none); its
	// resourceVersion keeps an older cache, which has not applied the
	// object's creation yet, from passing for one that has applied its
	// delete. An object with finalizers, or a graceful deletion, stays
	// cached until the server removes it; the wait lasts until then.
	// Errors as WaitForWrite.
	WaitForDelete(ctx context.Context, obj T) error
	// Ownership returns which of the informer's objects this replica's
	// controllers own now, and a channel closed when that changes: under
	// its factory's WithMembership, those whose shard key hashes into
	// what the membership gives the replica; otherwise every object, and
	// the channel is nil. Package controller reconciles only what it owns.
	Ownership() Ownership
}

// NewInformer returns an Informer[T] that lists and watches gvr through lw.
//
// Every object lw delivers reaches the cache through the one ingest path
// (see Converter): convert turns it into T once, as it is ingested; a nil
// convert is Identity[T], for an lw that delivers T itself, as a typed REST
// client or, for T = *unstructured.Unstructured, the dynamic client does.
// Objects that are not T, nil, or could not be decoded (*Undecodable) are
// reported to the ErrorHandler as *ConversionError and skipped; they never
// reach the cache.
//
// Every InformerOption applies: WithLabelSelector, WithFieldSelector and
// WithTweakListOptions change every list and watch request lw gets (the
// tweak, then the combined selectors, as a Factory's Source gets them),
// and are the informer's selection. WithNamespace cannot be honoured (the
// namespace is lw's: its requests' path) and is an error naming it, as is
// any invalid option; nothing is made then. Most callers get informers
// from a Factory instead.
func NewInformer[T Object](lw cache.ListerWatcher, gvr schema.GroupVersionResource, convert Converter[T], opts ...InformerOption) (Informer[T], error) {
	o, err := resolveOptions(factoryOptions(opts))
	if err != nil {
		return nil, err
	}
	if o.namespace != metav1.NamespaceAll {
		return nil, fmt.Errorf("generic: NewInformer: WithNamespace(%q): the ListerWatcher chooses the namespace; make it for that namespace instead", o.namespace)
	}
	if _, err := compactCodecFor[T](o); err != nil {
		return nil, err
	}
	if tweak := o.listTweak(); tweak != nil && lw != nil && !isNilPointer(lw) {
		lw = tweakedListerWatcher(lw, tweak)
	}
	return newInformer(lw, gvr, convert, o, newShardState(o.shardOrAll()), selectionOf(o), nil), nil
}

// newInformer assembles an informer: the one place where the list/watch
// chain, the telemetry, the state machine and client-go's shared informer
// are put together. shard is the shard it holds: its factory's, or its
// own; sel what lw selects of the resource, as far as it is known; served
// its Registry's servedChanges (nil for an informer of none).
func newInformer[T Object](lw cache.ListerWatcher, gvr schema.GroupVersionResource, convert Converter[T], o options, shard *shardState, sel selection, served *servedChanges) *informer[T] {
	i := &informer[T]{gvr: gvr, namespace: o.namespace, errorHandler: o.errorHandler, shard: shard, shardKey: o.shardKey, selection: sel}
	i.provider = metricsProviderOf(o)
	i.telemetry = newTelemetry(gvr, i.provider != nil)
	i.callbacks = callbacks.New(maxWaitingErrorReports, i.telemetry.DroppedError)
	i.settings = newInformerSettings[T](o)
	i.settings.latest = i
	i.machine = newStateMachine(gvr, o.stateHandler, i.callbacks.Enqueue, served.stateChanged)
	background := context.Background()
	i.runCtx.Store(&background)
	if o.transform != nil {
		i.transform.Store(&o.transform)
	}

	newT, _ := newObjectFunc[T]()
	var example runtime.Object
	if newT != nil {
		example = newT()
	}
	if lw == nil || isNilPointer(lw) {
		lw = FailingListerWatcher(errors.New("generic: nil ListerWatcher"))
	}
	if convert == nil {
		convert = Identity[T]()
	}
	// Checked where o was given (NewInformer, NewFactoryOn, Acquire).
	i.codec, _ = compactCodecFor[T](o)
	var store func(T) listwatch.Stored
	if i.codec != nil {
		// The chain hands on records, which are not Ts: the reflector
		// checks no type.
		store, example = i.compactStored, nil
	}
	i.chain = listwatch.New(lw, listwatch.Config[T]{
		GVR:             gvr,
		Convert:         convert,
		NewT:            bookmarkFunc(newT, o.exampleType),
		Transform:       i.ingestTransform(o.stripManaged, o.share),
		Store:           store,
		EncodedSize:     i.encodedSize(),
		StopForGood:     o.stopWhenGone,
		NotServedProbes: served.probeBackoff(),
		UnexpectedType:  ErrUnexpectedType,
	}, listwatch.Hooks{
		Reject:        i.reject,
		Served:        servedHooks{i.machine},
		Meter:         i.telemetry,
		Selection:     shard.selection(o.shardKey),
		ServedChanged: served.Changed,
	})
	i.indexes = indexguard.New(indexguard.Hooks{Report: i.report, IndexError: newIndexError, Partial: newPartialIndexError})
	i.shared = cache.NewSharedIndexInformerWithOptions(i.chain.ListerWatcher(), example, cache.SharedIndexInformerOptions{
		ResyncPeriod:      o.resyncPeriod,
		Indexers:          i.indexes.Indexers(i.indexersOfObjects(o.indexers)),
		ObjectDescription: gvr.String(),
		Identifier:        o.informerName.WithResource(gvr),
	})
	// What reads the store's indexes sees the guard's view of it
	// (indexguard.View): a partial answer says so.
	view := i.indexes.View(i.shared.GetIndexer())
	hooks := handlers.Hooks{Run: i.Run, SetTransform: i.setTransform, NewCursor: i.newCursor, Indexer: view, AddIndexers: i.addIndexers}
	if i.codec != nil {
		hooks.Indexer = &compact.Indexer[T]{Store: view, Codec: i.codec, Report: i.report}
		hooks.Decode, hooks.Report = i.codec.Object, i.report
	}
	i.tracked = handlers.Shared(i.shared, hooks)
	_ = i.shared.SetWatchErrorHandlerWithContext(i.watchError)
	i.lister = newLister[T](view, gvr.GroupResource(), hooks.Decode)
	return i
}

// addIndexersNow adds index functions of objects to this informer's
// store: with a compact store they get decoded objects; guarded
// (indexguard).
func (i *informer[T]) addIndexersNow(indexers cache.Indexers) error {
	return i.indexes.Add(i.indexersOfObjects(indexers), i.shared.AddIndexers)
}

func newIndexError(index, key string, err error) error {
	return &IndexError{Index: index, Key: key, Err: err}
}

func newPartialIndexError(index string, keys []string) error {
	return &PartialIndexError{Index: index, Keys: keys}
}

// indexersOfObjects returns indexers as the store calls them: with a compact
// store, they get decoded objects (compact.Codec.IndexersOfObjects).
func (i *informer[T]) indexersOfObjects(indexers cache.Indexers) cache.Indexers {
	if i.codec == nil {
		return indexers
	}
	return i.codec.IndexersOfObjects(indexers)
}

// compactStored is what the ingest records and hands on of t with a
// compact store: its compact.Record, made once, which the ingest's record
// of last good states and the informer's store share. An object that does
// not encode is reported and stored as it is (reads return it as it is): no
// object is lost.
func (i *informer[T]) compactStored(t T) listwatch.Stored {
	record, err := i.codec.Compact(t)
	if err != nil {
		i.report(fmt.Errorf("generic: WithCompactStore: %s %q is kept decoded: %w", i.gvr, keyOf(t), err))
		return t
	}
	return record
}

type informer[T Object] struct {
	shared cache.SharedIndexInformer
	// settings are what it was made with and what was added since,
	// shared with the informers that replace it in a Factory
	// (informer_settings.go).
	settings *informerSettings[T]
	// codec keeps the store's objects compact (WithCompactStore); nil
	// for the default store of objects.
	codec *compact.Codec[T]
	// indexes guards the store's index functions and says when an answer
	// of an index is partial.
	indexes *indexguard.Guard
	// tracked is shared as Informer() hands it out: its Run is ours
	// (handlers.Shared).
	tracked      cache.SharedIndexInformer
	lister       Lister[T]
	gvr          schema.GroupVersionResource
	namespace    string
	errorHandler ErrorHandler
	machine      *stateMachine
	// callbacks runs the StateHandler and ErrorHandler calls, in order,
	// off the informer's own goroutines; it drops ErrorHandler calls past
	// maxWaitingErrorReports waiting.
	callbacks *callbacks.Queue
	// lastLogged is the last list or watch error logged, so that a failure
	// that repeats is logged once, not at every retry.
	lastLogged atomic.Pointer[string]
	// runCtx is the context Run was called with (context.Background before),
	// passed to the ErrorHandler for errors raised outside of a list or
	// watch call, so that they are logged with the informer's logger.
	runCtx atomic.Pointer[context.Context]
	// ran is set by the first Run; later ones only let client-go refuse.
	// The user's transform (WithTransform, or Informer().SetTransform) may
	// be set until then.
	startMu   sync.Mutex
	ran       bool
	transform atomic.Pointer[cache.TransformFunc]
	// chain is the list/watch chain between its source and its reflector.
	chain *listwatch.Chain[T]
	// selection is what its ListerWatcher asks the server for, as far as
	// it is known; shard is the shard it holds (the factory's, or its own),
	// of shardKey's hash space.
	selection selection
	shard     *shardState
	shardKey  ShardKey
	// telemetry is its sync progress and metrics; provider is
	// WithMetricsProvider's, nil without one.
	telemetry *telemetry.Telemetry
	provider  MetricsProvider
}

func (i *informer[T]) Informer() cache.SharedIndexInformer { return i.tracked }

func (i *informer[T]) Lister() Lister[T] { return i.lister }

func (i *informer[T]) HasSynced() bool { return i.shared.HasSynced() }

func (i *informer[T]) GroupVersionResource() schema.GroupVersionResource { return i.gvr }

func (i *informer[T]) Ownership() Ownership { return i.shard.owner.ownership(i.shardKey) }

// Status reports the informer's Status. It changes nothing: the State is
// the state machine's, except that a cache filled a moment before the
// machine heard of it already reads Synced, so that Status agrees with
// HasSynced.
func (i *informer[T]) Status() Status {
	s := i.machine.get()
	if s.State == Syncing && i.shared.HasSynced() {
		s.State = Synced
	}
	s.Shard = i.shard.describe()
	s.CurrentShard, _ = i.shard.shard()
	s.ShardFilteredByClient = i.chain.FilteredOnClient()
	if i.selection.fields != nil {
		s.FieldSelector = i.selection.fields.String()
	}
	s.Progress = SyncProgress(i.telemetry.Progress(i.shared.HasSynced()))
	s.Stale = i.chain.StaleCount()
	s.LastEventResourceVersion = i.chain.NewestHandedOn()
	s.DroppedErrors = i.callbacks.Dropped()
	return s
}

// StaleObjects is every object the ingest keeps at a last good state (see
// the function StaleObjects).
func (i *informer[T]) StaleObjects() []StaleObject {
	stale := i.chain.Stale()
	if len(stale) == 0 {
		return nil
	}
	out := make([]StaleObject, len(stale))
	for k, st := range stale {
		out[k] = StaleObject{Key: st.Key.String(), ResourceVersion: st.ResourceVersion, Err: st.Err, Since: st.Since}
	}
	return out
}

// Run runs the shared informer, and tells the state machine when it starts,
// when its cache is first filled and when it stops. It returns when ctx
// has ended and every goroutine it started (the reflector's, the
// handlers', the watches', the callbacks') has ended. An informer runs
// once: a later Run returns at once, as client-go's does.
func (i *informer[T]) Run(ctx context.Context) {
	if ctx == nil {
		ctx = context.Background()
	}
	i.startMu.Lock()
	first := !i.ran
	i.ran = true
	i.startMu.Unlock()
	if !first {
		i.shared.RunWithContext(ctx) // logs and returns: it runs already
		return
	}
	i.runCtx.Store(&ctx)
	i.machine.fire(evRun, nil)
	i.telemetry.Start(i.resolveMetrics())
	ctx, cancel := context.WithCancel(ctx)
	var filled sync.WaitGroup
	filled.Go(func() {
		select {
		case <-i.shared.HasSyncedChecker().Done():
			i.machine.fire(evCacheFilled, nil)
			i.telemetry.Filled(ctx, time.Now())
		case <-ctx.Done():
		}
	})
	i.shared.RunWithContext(ctx)
	// The shared informer has returned: its cache changes no more, and
	// its handlers are done.
	i.machine.fire(evStopped, nil)
	cancel()
	filled.Wait()
	// The reflector has returned, so no watch is made any more, and the
	// ones it made end with ctx.
	i.chain.Wait()
	i.telemetry.Stop()
	i.callbacks.Wait()
}

// stopped reports whether the informer has stopped, or will make no more
// requests (WithStopWhenNotServed), whoever ran it: whether its State is
// Stopped, which the state machine alone decides.
func (i *informer[T]) stopped() bool {
	select {
	case <-i.machine.stoppedChan():
		return true
	default:
		return false
	}
}

// waitForSync waits until the informer's cache is filled, it stops, or ctx
// ends, and reports whether the cache was filled.
func (i *informer[T]) waitForSync(ctx context.Context) bool {
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

func (i *informer[T]) objectType() string { return reflect.TypeFor[T]().String() }

// watchError is the reflector's WatchErrorHandler: client-go's default
// logging, except that a failure that repeats is logged once (at V(4)
// afterwards), and a 404 not at all (the served guard logs its changes).
func (i *informer[T]) watchError(ctx context.Context, r *cache.Reflector, err error) {
	logger := klog.FromContext(ctx)
	message := err.Error()
	if apierrors.IsNotFound(err) || (i.lastLogged.Load() != nil && *i.lastLogged.Load() == message) {
		logger.V(4).Info("List or watch failed again", "gvr", i.gvr.String(), "err", message)
		return
	}
	i.lastLogged.Store(&message)
	cache.DefaultWatchErrorHandler(ctx, r, err)
}

func (i *informer[T]) AddEventHandler(handler cache.TypedResourceEventHandler[T], options ...cache.HandlerOptions) (cache.ResourceEventHandlerRegistration, error) {
	if handler == nil {
		return nil, errors.New("generic: nil event handler")
	}
	var o cache.HandlerOptions
	switch len(options) {
	case 0:
	case 1:
		o = options[0]
	default:
		return nil, fmt.Errorf("generic: at most one HandlerOptions may be passed, got %d", len(options))
	}
	typed := &handlers.Typed[T]{Handler: handler, Report: i.report, WrongType: unexpectedEventType[T], Cursor: i.newCursor()}
	if i.codec != nil {
		typed.Decode = i.codec.Object
	}
	return i.shared.AddEventHandlerWithOptions(typed, o)
}

// newCursor is a new handler's place in the informer's delivery clock.
func (i *informer[T]) newCursor() handlers.Cursor {
	cursor := i.telemetry.Clock().Cursor()
	return &cursor
}

func unexpectedEventType[T Object](verb string, obj any) error {
	var zero T
	return fmt.Errorf("%w: %s event for a %T, not a %T", ErrUnexpectedType, verb, obj, zero)
}

// AddIndexers adds typed index functions to the informer, or, once a
// Factory replaced it, to the informer that replaced it (informerSettings).
func (i *informer[T]) AddIndexers(indexers cache.TypedIndexers[T]) error {
	untyped, err := untypedIndexers(indexers, i.gvr.GroupResource())
	if err != nil {
		return err
	}
	return i.addIndexers(untyped)
}

// addIndexers adds index functions of objects, as AddIndexers and
// Informer().AddIndexers are given them: recorded in the settings, so that
// a replacement has them too, and added to the latest informer made with
// them.
func (i *informer[T]) addIndexers(indexers cache.Indexers) error {
	return i.settings.addIndexers(indexers)
}

// ingestTransform is what the ingest does to every object it converted:
// managedFields stripped if asked (WithStripManagedFields), then the
// user's transform, if any, guarded, on an object with labels of its own
// (objectedit.OwnLabels), since a transform may edit them in place; then,
// if share is not nil, what repeats shared (withIngestSharing).
func (i *informer[T]) ingestTransform(strip bool, share func(obj any)) func(T) (T, error) {
	return func(t T) (T, error) {
		if strip {
			objectedit.StripManagedFields(t)
		}
		if user := i.transform.Load(); user != nil {
			objectedit.OwnLabels(t)
			var err error
			if t, err = i.guardTransform(*user)(t); err != nil {
				return t, err
			}
		}
		if share != nil {
			share(t)
		}
		return t, nil
	}
}

// setTransform sets the user's transform, as WithTransform does; it is
// Informer().SetTransform (internal/handlers), with client-go's
// error once the informer has started.
func (i *informer[T]) setTransform(transform cache.TransformFunc) error {
	i.startMu.Lock()
	defer i.startMu.Unlock()
	if i.ran {
		return errors.New("informer has already started")
	}
	if transform == nil {
		i.transform.Store(nil)
	} else {
		i.transform.Store(&transform)
	}
	i.settings.setTransform(transform)
	return nil
}

// guardTransform wraps the user's transform (WithTransform) for the ingest,
// which runs it on every object it converts: a result that is not a T
// (nil, or another type) is reported as an error wrapping
// ErrUnexpectedType and the object goes on as it was before the
// transform.
func (i *informer[T]) guardTransform(transform cache.TransformFunc) func(T) (T, error) {
	return func(t T) (T, error) {
		out, err := transform(t)
		if err != nil {
			return t, err
		}
		if transformed, ok := out.(T); ok && !isNilPointer(transformed) {
			return transformed, nil
		}
		i.report(fmt.Errorf("generic: the transform of %s %q returned %T: %w; the object is stored untransformed",
			i.gvr, keyOf(t), out, ErrUnexpectedType))
		return t, nil
	}
}

// report hands err to the ErrorHandler, with the context of Run.
func (i *informer[T]) report(err error) { i.reportFrom(*i.runCtx.Load(), err) }

// reject is the list/watch chain's report of an object it left out: it is
// counted, then handed to the ErrorHandler as a *ConversionError.
func (i *informer[T]) reject(ctx context.Context, key string, err error) {
	i.telemetry.Rejected()
	i.reportFrom(ctx, &ConversionError{GVR: i.gvr, Key: key, Err: err})
}

// maxWaitingErrorReports is the most reports an informer keeps waiting for
// its ErrorHandler; more are dropped, and counted (Status.DroppedErrors,
// InformerMetrics.DroppedErrorsMetric). See WithErrorHandler.
const maxWaitingErrorReports = 1000

// reportFrom hands err to the ErrorHandler, with ctx (which carries the
// logger), on the informer's callbacks goroutine: never on the goroutine
// that met the error, which may hold the cache's lock (index functions) or
// be one that Release and Shutdown wait for. It is dropped if
// maxWaitingErrorReports reports wait already.
func (i *informer[T]) reportFrom(ctx context.Context, err error) {
	i.callbacks.EnqueueDroppable(func() { i.errorHandler(ctx, err) })
}

// keyOf is the cache key of obj, tombstones included, or "" if it has none.
func keyOf(obj any) string {
	key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		return ""
	}
	return key
}
