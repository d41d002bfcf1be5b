package controller

import (
	"errors"
	"fmt"
	"runtime/debug"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/internal/writes"
)

// source is an informer a Controller reads and how its events become keys
// of the controller's primary objects.
type source struct {
	gvr      schema.GroupVersionResource
	informer cache.SharedIndexInformer
	// register adds the handler that enqueues what the source's events
	// map to, and tells told of the resource version of each object it
	// has finished with.
	register func(enqueue enqueuer, report func(error), told *toldUpTo) (cache.ResourceEventHandlerRegistration, error)
	// status is the informer's Status.
	status func() generic.Status
	// caughtUp waits until the informer's cache has applied w.
	caughtUp catchUp
	// judged is false for an informer whose field selector the wait
	// cannot judge a write against: caughtUp waits only until its cache
	// holds no state of the object older than the write (catchUpOf).
	judged bool
	// uidOf returns the UID of the cached object w names, or "".
	uidOf func(w writes.Write) string
	err   error
}

// enqueuer takes the keys an event maps to. primary is set for the
// primary's own events, to the object (nil for a delete whose last state
// is unknown).
type enqueuer func(key cache.ObjectName, primary *event)

// event is a primary's own event.
type event struct{ obj runtime.Object }

// Primary is the informer of a Controller's primary objects, made by For.
type Primary struct {
	source
	// cached returns the object of key the primary's cache holds, if it
	// holds one; all returns every object it holds.
	cached func(key cache.ObjectName) (runtime.Object, bool)
	all    func() []runtime.Object
	// sharded reports whether the primary's informer selects one shard
	// of several (generic.Status.CurrentShard), so that a primary it does
	// not hold may be another replica's. It is read at each event: a
	// reshard or a membership changes it.
	sharded func() bool
	// ownership is what the replica owns of the primary's objects
	// (generic.Informer.Ownership); member whether its factory has a
	// membership, which does not change.
	ownership func() generic.Ownership
	member    bool
}

// For makes the Primary of a Controller: every add, update and delete of
// informer's objects enqueues the object's own key, and the controller
// reconciles those keys. An add or update enqueues only if every predicate
// passes (deletes always do).
func For[T generic.Object](informer generic.Informer[T], predicates ...Predicate[T]) Primary {
	src := watches(informer, nil, predicates)
	if isNil(informer) {
		return Primary{source: src}
	}
	indexer := informer.Informer().GetIndexer()
	return Primary{
		source: src,
		cached: func(key cache.ObjectName) (runtime.Object, bool) {
			obj, exists, err := indexer.GetByKey(key.String())
			if !exists || err != nil {
				return nil, false
			}
			o, ok := obj.(runtime.Object)
			return o, ok
		},
		all: func() []runtime.Object {
			var objs []runtime.Object
			for _, obj := range indexer.List() {
				if o, ok := obj.(runtime.Object); ok {
					objs = append(objs, o)
				}
			}
			return objs
		},
		sharded:   func() bool { return informer.Status().CurrentShard.Count > 1 },
		ownership: informer.Ownership,
		member:    informer.Ownership().Changed != nil,
	}
}

// Watches makes the controller watch secondary objects: each add, update (old and
// new state) and delete of informer's objects enqueues the keys toPrimaries
// maps it to. An add or update enqueues only if every predicate passes
// (deletes always do); a delete whose last state the informer does not
// know (a tombstone without an object) maps to nothing.
//
// toPrimaries must not change the object; it may return nil. See
// WatchesByIndex for a mapping through an index of the primary's informer.
func Watches[S generic.Object](informer generic.Informer[S], toPrimaries func(S) []cache.ObjectName, predicates ...Predicate[S]) Option {
	if toPrimaries == nil {
		return withSource(source{err: fmt.Errorf("controller: Watches of %s: nil map function", gvrOf(informer))})
	}
	return withSource(watches(informer, toPrimaries, predicates))
}

func withSource(src source) Option {
	return func(o *options) error {
		if src.err != nil {
			return src.err
		}
		o.sources = append(o.sources, src)
		return nil
	}
}

// Owns makes the controller watch objects its primaries control: each event enqueues
// the key of the object's controlling owner (the owner reference with
// controller: true), in the object's namespace, if that owner is of
// ownerKind; other objects enqueue nothing. For a cluster-scoped owner of
// namespaced objects, use Watches with a map function.
func Owns[S generic.Object](informer generic.Informer[S], ownerKind schema.GroupKind, predicates ...Predicate[S]) Option {
	return withSource(watches(informer, func(obj S) []cache.ObjectName {
		ref := metav1.GetControllerOfNoCopy(obj)
		if ref == nil || ref.Kind != ownerKind.Kind {
			return nil
		}
		gv, err := schema.ParseGroupVersion(ref.APIVersion)
		if err != nil || gv.Group != ownerKind.Group {
			return nil
		}
		return []cache.ObjectName{{Namespace: obj.GetNamespace(), Name: ref.Name}}
	}, predicates))
}

// WatchesByIndex makes the controller watch secondary objects mapped to
// primaries through an index of the primary's informer: each event of
// secondary's objects enqueues the keys of the primaries the index named
// index files under any of the values values returns for the object. The
// index must be the primary informer's (generic.WithIndexers, or
// Informer.AddIndexers before Run; the factory's informers have
// cache.NamespaceIndex); an unknown index maps to nothing. While the
// index's function fails on some primaries (a *generic.PartialIndexError),
// whether they have the values cannot be known: they are enqueued too.
//
// For example, every primary of a secondary object's namespace:
//
//	controller.WatchesByIndex(secrets, quotas, cache.NamespaceIndex, controller.NamespaceOf)
func WatchesByIndex[S, T generic.Object](secondary generic.Informer[S], primary generic.Informer[T], index string, values func(S) []string, predicates ...Predicate[S]) Option {
	if isNil(primary) || values == nil {
		return withSource(source{err: fmt.Errorf("controller: WatchesByIndex of %s: nil primary informer or values function", gvrOf(secondary))})
	}
	indexer := primary.Informer().GetIndexer()
	return Watches(secondary, func(obj S) []cache.ObjectName {
		var keys []cache.ObjectName
		for _, value := range values(obj) {
			names, err := indexer.IndexKeys(index, value)
			var partial *generic.PartialIndexError
			if errors.As(err, &partial) {
				names = append(names, partial.Keys...)
			} else if err != nil {
				return nil
			}
			for _, name := range names {
				if key, err := cache.ParseObjectName(name); err == nil {
					keys = append(keys, key)
				}
			}
		}
		return keys
	}, predicates...)
}

// NamespaceOf returns obj's namespace: the values, for WatchesByIndex with
// cache.NamespaceIndex, that map an object to the primaries of its
// namespace.
func NamespaceOf[S generic.Object](obj S) []string { return []string{obj.GetNamespace()} }

// watches makes a source; toPrimaries nil maps an object to its own key.
func watches[S generic.Object](informer generic.Informer[S], toPrimaries func(S) []cache.ObjectName, predicates []Predicate[S]) source {
	if isNil(informer) {
		return source{err: fmt.Errorf("controller: nil informer")}
	}
	if _, err := objectOf[S](writes.Write{}); err != nil {
		return source{err: fmt.Errorf("controller: informer of %s: %w", informer.GroupVersionResource(), err)}
	}
	// Decided once, here: the informer's selection does not change.
	judged := judgesWrites(informer.Status().FieldSelector)
	return source{
		gvr:      informer.GroupVersionResource(),
		informer: informer.Informer(),
		// A handler per registration: a source may serve several
		// controllers.
		register: func(enqueue enqueuer, report func(error), told *toldUpTo) (cache.ResourceEventHandlerRegistration, error) {
			return informer.AddEventHandler(&handler[S]{toPrimaries: toPrimaries, predicates: predicates, enqueue: enqueue, report: report, told: told})
		},
		status:   informer.Status,
		caughtUp: catchUpOf(informer, judged),
		judged:   judged,
		uidOf:    uidOfCached(informer.Lister()),
	}
}

// handler enqueues the keys an informer's events map to.
// A predicate or map function that panics is reported and its event
// dropped, as a reconcile's panic is reported: client-go would crash the
// process (utilruntime.ReallyCrash).
type handler[S generic.Object] struct {
	toPrimaries func(S) []cache.ObjectName
	predicates  []Predicate[S]
	enqueue     enqueuer
	report      func(error)
	// told is told of each object's resource version once the handler
	// has enqueued what it maps to (idle.go).
	told *toldUpTo
}

// recovered reports a panic of the user's functions during an event.
func (h *handler[S]) recovered(event string) {
	if r := recover(); r != nil {
		h.report(fmt.Errorf("controller: a predicate or map function panicked on %s: %v\n%s", event, r, debug.Stack()))
	}
}

func (h *handler[S]) OnAdd(obj S, _ bool) {
	defer h.tell(obj)
	defer h.recovered("an add")
	var none S
	if h.passes(none, obj) {
		h.keys(obj)
	}
}

func (h *handler[S]) OnUpdate(oldObj, newObj S) {
	defer h.tell(newObj)
	defer h.recovered("an update")
	if !h.passes(oldObj, newObj) {
		return
	}
	if h.toPrimaries != nil {
		h.keys(oldObj)
	}
	h.keys(newObj)
}

func (h *handler[S]) OnDelete(deleted cache.DeletedObject[S]) {
	defer h.tell(deleted.OptionalObj)
	defer h.recovered("a delete")
	if h.toPrimaries == nil {
		if key := deleted.GetObjectName(); key.Name != "" {
			e := &event{}
			var none S
			if deleted.OptionalObj != none {
				e.obj = deleted.OptionalObj
			}
			h.enqueue(key, e)
		}
		return
	}
	var none S
	if deleted.OptionalObj != none {
		h.keys(deleted.OptionalObj)
	}
}

// tell records that the handler has finished with obj (nil or zero: a
// tombstone without a state), after it enqueued what obj maps to.
func (h *handler[S]) tell(obj S) {
	var none S
	if h.told != nil && obj != none && !isNil(obj) {
		h.told.told(obj.GetResourceVersion())
	}
}

func (h *handler[S]) passes(oldObj, newObj S) bool {
	for _, p := range h.predicates {
		if p != nil && !p(oldObj, newObj) {
			return false
		}
	}
	return true
}

func (h *handler[S]) keys(obj S) {
	if h.toPrimaries == nil {
		h.enqueue(cache.MetaObjectToName(obj), &event{obj: obj})
		return
	}
	for _, key := range h.toPrimaries(obj) {
		if key.Name != "" {
			h.enqueue(key, nil)
		}
	}
}

func uidOfCached[S generic.Object](lister generic.Lister[S]) func(writes.Write) string {
	return func(w writes.Write) string {
		var obj S
		var err error
		if w.Namespace == "" {
			obj, err = lister.Get(w.Name)
		} else {
			obj, err = lister.Namespace(w.Namespace).Get(w.Name)
		}
		if err != nil {
			return ""
		}
		return string(obj.GetUID())
	}
}

func gvrOf[S generic.Object](informer generic.Informer[S]) schema.GroupVersionResource {
	if isNil(informer) {
		return schema.GroupVersionResource{}
	}
	return informer.GroupVersionResource()
}
