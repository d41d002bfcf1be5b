package generic

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

// TweakListOptionsFunc changes the options of every list and watch request an
// informer makes. It has the shape of client-go's
// dynamicinformer.TweakListOptionsFunc and
// informers/internalinterfaces.TweakListOptionsFunc.
type TweakListOptionsFunc func(*metav1.ListOptions)

// ErrorHandler receives the errors an informer reports and recovers from:
// a *ConversionError for an object it skipped, an *IndexError for an index
// function that failed, and errors wrapping ErrUnexpectedType. ctx carries
// the informer's logger. It is called from a goroutine of the informer's
// own, one call at a time per informer, in the order the errors were met
// (interleaved with the StateHandler's calls), so it must be safe for
// concurrent use across informers, and should return quickly: at most
// 1,000 reports wait for it per informer, and errors met while 1,000 wait
// are dropped, counted in Status.DroppedErrors and in the
// InformerMetrics' DroppedErrorsMetric. StateHandler calls are never
// dropped.
type ErrorHandler func(ctx context.Context, err error)

// FactoryOption configures a Registry and every informer it makes:
// NewRegistry, NewFactory, typed.NewFactory and generictest's
// FactoryOptions take them. Every InformerOption is one too, which sets
// the default of every informer. The options that only a factory can
// honour (WithMembership) are FactoryOptions alone, so that passing one
// where an informer is made does not compile. A nil option is ignored.
// Options are plain values: one may be given to any number of factories.
type FactoryOption interface {
	applyToFactory(o *options)
}

// InformerOption configures one informer, overriding the factory's
// (Factory.Acquire, typed.InformerFor and the rest, NewInformer), as
// controller-runtime's cache.ByObject does; given to a factory it is a
// FactoryOption and applies to every informer. A nil option is ignored.
// Given to an Acquire of a selection whose informer exists already, it
// must be one that informer can honour (indexes are added to it; another
// setting of an option that cannot change on a running informer is an
// *OptionConflictError): see Factory.Acquire.
type InformerOption interface {
	FactoryOption
	applyToInformer(o *options)
}

// factoryOption is an option of a factory alone.
type factoryOption func(*options)

func (f factoryOption) applyToFactory(o *options) { f(o) }

// informerOption is an option of an informer, and so of a factory.
type informerOption func(*options)

func (f informerOption) applyToFactory(o *options)  { f(o) }
func (f informerOption) applyToInformer(o *options) { f(o) }

// factoryOptions are informer options as factory options, for
// resolveOptions.
func factoryOptions(opts []InformerOption) []FactoryOption {
	all := make([]FactoryOption, 0, len(opts))
	for _, opt := range opts {
		if opt != nil {
			all = append(all, opt)
		}
	}
	return all
}

// options holds what the Options set, after resolveOptions filled in the
// defaults.
type options struct {
	resyncPeriod     time.Duration
	namespace        string
	tweakListOptions TweakListOptionsFunc
	indexers         cache.Indexers
	transform        cache.TransformFunc
	errorHandler     ErrorHandler
	stateHandler     StateHandler
	labelSelector    string
	fieldSelector    string
	stopWhenGone     bool
	stripManaged     bool
	deferredStart    bool
	// share, if not nil, makes each object share what repeats with the
	// objects ingested before it, after the transform (withIngestSharing).
	share func(obj any)
	// shard is WithShard's, nil if not given (every object); shardKey is
	// the field hashed.
	shard    *Shard
	shardKey ShardKey
	// member is WithMembership's, nil if not given; memberErr is why the
	// one given cannot be used.
	member    *member
	memberErr error
	// metricsProvider receives the informers' metrics (metrics.go).
	metricsProvider MetricsProvider
	// informerName is client-go's informer identity for its own
	// metrics (WithInformerName).
	informerName *cache.InformerName
	// compact is WithCompactStore's, nil if not given.
	compact *compactStore
	// exampleType is WithExampleObject's Go type, nil if not given or
	// given nil (exampleGiven).
	exampleType  reflect.Type
	exampleGiven bool
	// servedWatch is WithServedWatch's, nil if not given.
	servedWatch ServedWatch
}

// WithResyncPeriod sets the default resync period of the informers, as
// client-go's defaultResync argument does: every period, each handler that
// asked for resyncs gets an update for every cached object. Zero, the
// default, turns resyncs off; so does a negative period (client-go would
// resync as fast as it can).
func WithResyncPeriod(period time.Duration) InformerOption {
	return informerOption(func(o *options) { o.resyncPeriod = max(period, 0) })
}

// WithNamespace limits the informers to one namespace. The default,
// metav1.NamespaceAll (""), watches all namespaces. Cluster-scoped resources
// are not in any namespace; where the source knows a resource's scope (the
// typed factory does) it ignores the namespace for them.
func WithNamespace(namespace string) InformerOption {
	return informerOption(func(o *options) { o.namespace = namespace })
}

// WithTweakListOptions sets a function that changes the options of every
// list and watch request, as client-go's TweakListOptionsFunc does, for
// example a watch's TimeoutSeconds or a label selector.
//
// The selectors it sets are read once, when the informer is made (Acquire,
// or the factory's constructor for factory-wide Options): the tweak is
// applied to an empty metav1.ListOptions, and its LabelSelector and
// FieldSelector are combined (AND) with WithLabelSelector's and
// WithFieldSelector's. They then name the informer and are its selection,
// as those options' are: two Acquires whose tweaks select differently get
// two informers, and read-your-writes waits (WaitForWrite, the
// controller's consistency wait) know what the tweak leaves out. A label
// or field that both the tweak and an option constrain, differently, is an
// error naming both. Every request then gets the tweak, followed by the
// combined selectors; a tweak whose selectors change from call to call
// keeps those of its first call. Two tweaks are the same setting for a
// shared informer (Factory.Acquire) when they set the same on an empty
// metav1.ListOptions, selectors aside.
func WithTweakListOptions(tweak TweakListOptionsFunc) InformerOption {
	return informerOption(func(o *options) { o.tweakListOptions = tweak })
}

// WithLabelSelector limits the informers to the objects whose labels match
// selector, in the syntax of metav1.ListOptions.LabelSelector ("app=web",
// "tier in (a,b)"). A selector that does not parse (labels.Parse) is an
// error where the Option is given. It is written in one form, which names
// the informer and is sent to the server: its requirements sorted, without
// repeats, "==" as "=", the values of "in" and "notin" sorted; so
// "b=2,a=1" and "a=1,b=2" make one informer and one watch.
func WithLabelSelector(selector string) InformerOption {
	return informerOption(func(o *options) { o.labelSelector = selector })
}

// WithFieldSelector limits the informers to the objects whose fields match
// selector, in the syntax of metav1.ListOptions.FieldSelector
// ("spec.nodeName=node-1"). A selector that does not parse
// (fields.ParseSelector) is an error where the Option is given. It is
// written in one form, as WithLabelSelector's: its terms sorted, without
// repeats, "==" as "=".
func WithFieldSelector(selector string) InformerOption {
	return informerOption(func(o *options) { o.fieldSelector = selector })
}

// WithIndexers adds indexers to every informer; a name given twice keeps the
// last function. A Factory's informers always have the namespace index
// (cache.NamespaceIndex), which Namespace(ns).List uses. Prefer
// Informer.AddIndexers, which takes typed index functions. Index functions
// run on the informer's goroutines, with the cache locked: they must be
// quick and safe for concurrent use. An index function that returns an
// error does not panic the informer, as it would in client-go: the error
// is reported as an *IndexError and the object is left out of that index,
// and while the function fails on any object every read of the index
// returns a *PartialIndexError beside what it found; a nil index function
// is reported so, and the index left out. Given to an Acquire of a
// selection whose informer exists, the indexes it lacks are added to it;
// one it has with another function is refused (see Factory.Acquire).
func WithIndexers(indexers cache.Indexers) InformerOption {
	return informerOption(func(o *options) {
		for name, fn := range indexers {
			o.indexers[name] = fn
		}
	})
}

// WithTransform sets the informers' transform, which runs on every object
// of a list or watch event, already converted to T, before it is recorded
// or stored: the contract of cache.SharedInformer.SetTransform (it may edit
// the object in place and return it; it runs on one goroutine), but it runs
// in the ingest, before the object is shared with anything, so it may edit
// any part of it, an *unstructured.Unstructured's maps included. Use it to
// drop fields nobody reads. A result that is not a non-nil T is reported to
// the ErrorHandler (wrapping ErrUnexpectedType) and the object goes on as it
// was before the transform. An error makes the object one that did not
// convert: reported as a *ConversionError and skipped; a cached object
// whose update fails so keeps its last good state, marked stale
// (Status.Stale), and is never delivered as deleted. An object reaches the transform with a metadata.labels map of its
// own (a copy, one allocation an object), and a typed object with
// annotations of its own too, which it may edit in place: the objects of
// typed's factories otherwise share equal labels maps, so the objects of an
// informer with a transform share none. Its other maps (a typed object's
// ResourceLists, selectors, data) and managedFields' fieldsV1 may still be
// shared (see typed.Clients.NoSharing). The drop-in for dynamicinformer
// (package unstructured) shares only after the transform: its transform
// gets objects as the dynamic client made them, and may edit any part.
// Informer().SetTransform, client-go's way, sets this same transform,
// until the informer starts (and for the informers of a Factory that
// replace it). A later Acquire of the same selection with another
// transform, or none, is refused (see Factory.Acquire).
func WithTransform(transform cache.TransformFunc) InformerOption {
	return informerOption(func(o *options) { o.transform = transform })
}

// WithErrorHandler sets where the informers report the errors they recover
// from. The default logs them through klog's contextual logger. Each
// informer keeps at most 1,000 reports waiting for handler; while that many
// wait, it drops the errors it meets and counts them (Status.DroppedErrors,
// the InformerMetrics' DroppedErrorsMetric), so that a slow or blocked
// handler under a flood of errors costs bounded memory.
func WithErrorHandler(handler ErrorHandler) InformerOption {
	return informerOption(func(o *options) { o.errorHandler = handler })
}

// WithStripManagedFields makes informers drop metadata.managedFields from
// every object before they store it (as the ingest converts it, before any
// transform set with WithTransform). Server-side apply's field ownership is
// rarely read by controllers and often a large part of an object: caches of
// many objects shrink by that much (see docs/benchmarks.md). An
// *unstructured.Unstructured whose metadata then fits a small Go map gets
// it remade as one: the same entries, a new map.
// Objects read from such a cache have no managedFields, so do not use it
// where they are needed, such as to build an apply configuration from a
// cached object.
func WithStripManagedFields() InformerOption {
	return informerOption(func(o *options) { o.stripManaged = true })
}

// WithStateHandler sets a function told of every change of an informer's
// State (see Informer.Status), for example to log or export it.
func WithStateHandler(handler StateHandler) InformerOption {
	return informerOption(func(o *options) { o.stateHandler = handler })
}

// WithStopWhenNotServed makes informers stop for good when their resource is
// no longer served (404 Not Found, as when its CRD is deleted): they deliver
// a delete for every object they had, then make no more requests and report
// State Stopped. By default they keep probing, with backoff, and relist by
// themselves when the resource is served again. A resource that was never
// listed (its CRD not installed yet) is NotServed and probed either way:
// only a resource that goes away stops the informer. A Factory replaces a
// stopped informer with a fresh one at the next Acquire or Start, and lets
// the old one run on, idle, until its handlers may have had every delete
// (see Factory.Acquire); until then, reads through its Handles fail with
// an error wrapping ErrInformerStopped (see Handle).
func WithStopWhenNotServed() InformerOption {
	return informerOption(func(o *options) { o.stopWhenGone = true })
}

// withDeferredStart makes a Factory run the informers asked for after
// Start only at the next Start, as client-go's shared informer factories
// do. By default they run at once, under the context of the last Start,
// so that an informer asked for late is never left unstarted (kubernetes
// #92777). The client-go-shaped factory of shim.go, which the drop-in
// packages use, sets it to keep client-go's behaviour exactly.
func withDeferredStart() FactoryOption {
	return factoryOption(func(o *options) { o.deferredStart = true })
}

// withIngestSharing makes the ingest give every object to share last,
// after managedFields are stripped and the transform has run: the
// transform, which client-go lets edit an object in place, gets it as its
// ListerWatcher made it, and what share makes shared is never edited
// again. The client-go-shaped factory of shim.go sets it for the drop-in
// for dynamicinformer (dropInSharing).
func withIngestSharing(share func(obj any)) FactoryOption {
	return factoryOption(func(o *options) { o.share = share })
}

// WithShard makes the informers hold one shard of their resource's
// objects, shard index of count (see Shard for the exact hash ranges):
// they send metav1.ListOptions.ShardSelector on every list and watch
// (sharded list and watch, KEP-5866, Kubernetes 1.36+, feature gate
// ShardedListAndWatch), and filter what comes back by the same hash and
// bounds (apimachinery's pkg/sharding), so that a server that ignores the
// selector (gate off, or older) yields the same partition, at the cost of
// sending every object to every replica; the informer then logs it once
// and its Status says ShardFilteredByClient.
//
// Run count replicas with index 0 … count-1 (a StatefulSet's ordinal, for
// example): their caches are disjoint and together hold every object. Given
// to NewFactory, the shard is the factory's, and Factory.Reshard changes it;
// given to one informer (Factory.Acquire), it is that informer's own.
//
// A shard that is not valid (ParseShard's rules: count at least 1, index in
// [0, count)) is an error where the Option is given. WithShard(0, 1)
// selects every object and sends no selector.
func WithShard(index, count int) InformerOption {
	shard := Shard{Index: index, Count: count}
	return informerOption(func(o *options) { o.shard = &shard })
}

// WithShardKey sets the field whose hash places objects in shards:
// ShardByUID (the default) or ShardByNamespace. Any other value is an
// error where the Option is given.
func WithShardKey(key ShardKey) InformerOption {
	return informerOption(func(o *options) { o.shardKey = key })
}

// shardOrAll is the shard given, or every object.
func (o options) shardOrAll() Shard {
	if o.shard == nil {
		return Shard{Index: 0, Count: 1}
	}
	return *o.shard
}

// resolveOptions is the one place that applies Options over the defaults,
// and refuses those that cannot be used.
func resolveOptions(opts []FactoryOption) (options, error) {
	o := options{
		namespace:    metav1.NamespaceAll,
		indexers:     cache.Indexers{}, // a map of its own: WithIndexers adds to it
		errorHandler: logError,
		shardKey:     ShardByUID,
	}
	for _, opt := range opts {
		if opt != nil && !isNilPointer(opt) {
			opt.applyToFactory(&o)
		}
	}
	if o.errorHandler == nil {
		o.errorHandler = logError
	}
	if err := o.validate(); err != nil {
		return o, err
	}
	if err := o.addTweakSelectors(); err != nil {
		return o, err
	}
	o.labelSelector, o.fieldSelector = canonicalLabelSelector(o.labelSelector), canonicalFieldSelector(o.fieldSelector)
	return o, nil
}

// validate returns why the options cannot be used, or nil.
func (o options) validate() error {
	if o.memberErr != nil {
		return o.memberErr
	}
	if o.member != nil {
		if o.shard != nil {
			return errors.New("generic: WithMembership and WithShard: the membership gives the shard")
		}
	}
	if o.shard != nil {
		if err := o.shard.validate(); err != nil {
			return err
		}
	}
	if err := o.shardKey.validate(); err != nil {
		return err
	}
	if o.exampleGiven && (o.exampleType == nil || o.exampleType.Kind() != reflect.Pointer || o.exampleType.Elem().Kind() != reflect.Struct) {
		return fmt.Errorf("generic: WithExampleObject(%v): want a pointer to a struct", o.exampleType)
	}
	if o.compact != nil && o.compact.decodedObjects < 0 {
		return fmt.Errorf("generic: WithCompactStore(%d): want 0 or more decoded objects", o.compact.decodedObjects)
	}
	if _, err := labels.Parse(o.labelSelector); err != nil {
		return fmt.Errorf("generic: WithLabelSelector(%q): %w", o.labelSelector, err)
	}
	if _, err := fields.ParseSelector(o.fieldSelector); err != nil {
		return fmt.Errorf("generic: WithFieldSelector(%q): %w", o.fieldSelector, err)
	}
	return nil
}

// logError is the default ErrorHandler: one structured log line per error,
// with the gvr and object key where the error carries them.
func logError(ctx context.Context, err error) {
	logger := klog.FromContext(ctx)
	var conversion *ConversionError
	if errors.As(err, &conversion) {
		logger.Error(conversion.Err, "Skipped an object the converter rejected", "gvr", conversion.GVR.String(), "key", conversion.Key)
		return
	}
	var index *IndexError
	if errors.As(err, &index) {
		logger.Error(index.Err, "Left an object out of an index", "index", index.Index, "key", index.Key)
		return
	}
	logger.Error(err, "Informer error")
}
