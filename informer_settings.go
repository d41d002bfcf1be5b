package generic

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"unsafe"
	"weak"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
)

// informerSettings is what the informers of one Factory key are made with:
// the resolved Options of the Acquire that made the first, with what was
// added since: indexers (Informer.AddIndexers, Informer().AddIndexers, the
// WithIndexers of later Acquires) and the transform set with
// Informer().SetTransform before the informer ran. The informers that
// replace one another under the key (registry.Entry.Latest) share it, so
// that a replacement is made as its predecessor is now, not as it was
// made, and a later Acquire is checked against it (admit).
//
// Lock order: the Registry's lock, then mu (a replacement is made under
// the Registry's lock); mu, then client-go's informer locks (indexers are
// added under mu).
type informerSettings[T Object] struct {
	mu sync.Mutex
	o  options
	// latest is the newest informer made with them: the one indexers
	// added later go to.
	latest *informer[T]
	// replaced is the one latest replaced: a Handle may read it for a
	// moment after latest is made, until the Registry links latest into
	// the line of its entry (registry.Entry.Latest takes no lock), so
	// indexers added then go to it too. Weak: the settings do not keep a
	// stopped informer's cache in memory.
	replaced weak.Pointer[informer[T]]
}

// newInformerSettings returns the settings o makes, with an indexers map
// of their own.
func newInformerSettings[T Object](o options) *informerSettings[T] {
	o.indexers = maps.Clone(o.indexers)
	if o.indexers == nil {
		o.indexers = cache.Indexers{}
	}
	return &informerSettings[T]{o: o}
}

// make makes an informer with the settings as they are now, with build,
// and makes it the latest.
func (s *informerSettings[T]) make(build func(o options) *informer[T]) *informer[T] {
	s.mu.Lock()
	defer s.mu.Unlock()
	o := s.o
	o.indexers = maps.Clone(s.o.indexers)
	i := build(o)
	i.settings = s
	if s.latest != nil {
		s.replaced = weak.Make(s.latest)
	}
	s.latest = i
	return i
}

// setTransform records the transform set with Informer().SetTransform, for
// the informers that replace this one.
func (s *informerSettings[T]) setTransform(transform cache.TransformFunc) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.o.transform = transform
}

// addIndexers adds indexers to the latest informer and records them, as
// client-go's AddIndexers does: a name the informer has already is
// refused ("indexer conflict"), and so is any index on an informer that
// has stopped.
func (s *informerSettings[T]) addIndexers(indexers cache.Indexers) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var conflicts []string
	for name := range indexers {
		if _, ok := s.o.indexers[name]; ok {
			conflicts = append(conflicts, name)
		}
	}
	if len(conflicts) > 0 {
		slices.Sort(conflicts)
		return fmt.Errorf("generic: indexer conflict: %s: the informer has an index of that name already", strings.Join(conflicts, ", "))
	}
	return s.addLocked(indexers, false)
}

// addLocked adds indexers, whose names are new, to the latest informer
// (and to the one it replaced, while that one runs), and records them if
// it took them, or, if forReplacement, if it has stopped: the informer
// that replaces it will have them. s.mu must be held.
func (s *informerSettings[T]) addLocked(indexers cache.Indexers, forReplacement bool) error {
	if err := s.latest.addIndexersNow(indexers); err != nil && !(forReplacement && s.latest.shared.IsStopped()) {
		return err
	}
	if replaced := s.replaced.Value(); replaced != nil && !replaced.shared.IsStopped() {
		// It stops: if it has stopped meanwhile, nothing reads it.
		_ = replaced.addIndexersNow(indexers)
	}
	maps.Copy(s.o.indexers, indexers)
	return nil
}

// admit checks that an Acquire whose resolved Options are asked can share
// the informer these settings made, and adds the indexers asked for that
// the informer lacks (kept for its replacement if it has stopped: the
// Acquire's hold moves to the replacement, which has them). Options that cannot change on a running informer
// must be the informer's (fixedOptions); an index of a name the informer
// has must have the same function (sameFunc). The first difference is an
// *OptionConflictError, and nothing is changed.
func (s *informerSettings[T]) admit(asked options, sel Selection) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, f := range fixedOptions {
		if f.same(s.o, asked) {
			continue
		}
		current, requested := f.describe(s.o), f.describe(asked)
		if current == requested {
			requested += sameNameNote
		}
		return &OptionConflictError{Selection: sel, Option: f.option, Current: current, Requested: requested}
	}
	added := cache.Indexers{}
	for _, name := range slices.Sorted(maps.Keys(asked.indexers)) {
		fn := asked.indexers[name]
		have, ok := s.o.indexers[name]
		switch {
		case !ok:
			added[name] = fn
		case !sameFunc(have, fn):
			option := fmt.Sprintf("WithIndexers(%q)", name)
			current, requested := funcName(have), funcName(fn)
			if current == requested {
				requested += sameNameNote
			}
			return &OptionConflictError{Selection: sel, Option: option, Current: current, Requested: requested}
		}
	}
	if len(added) == 0 {
		return nil
	}
	if err := s.addLocked(added, true); err != nil {
		return fmt.Errorf("generic: Acquire of %s: add the indexes %s to the shared informer: %w", sel.text(), strings.Join(slices.Sorted(maps.Keys(added)), ", "), err)
	}
	return nil
}

// fixedOption is an Option that cannot change on a running informer: how
// it is written, and how to compare and describe its setting.
type fixedOption struct {
	option   string
	same     func(a, b options) bool
	describe func(o options) string
}

// fixedOptions are every per-informer Option that cannot change on a
// running informer, but those that name the informer (WithNamespace, the
// selectors, WithShard, WithShardKey: another setting is another
// informer) and WithIndexers (indexes are added).
var fixedOptions = []fixedOption{
	{option: "WithTransform", same: func(a, b options) bool { return sameFunc(a.transform, b.transform) },
		describe: func(o options) string { return funcName(o.transform) }},
	{option: "WithStripManagedFields", same: func(a, b options) bool { return a.stripManaged == b.stripManaged },
		describe: func(o options) string { return onOrOff(o.stripManaged) }},
	{option: "WithCompactStore", same: func(a, b options) bool { return describeCompact(a) == describeCompact(b) },
		describe: describeCompact},
	{option: "WithResyncPeriod", same: func(a, b options) bool { return a.resyncPeriod == b.resyncPeriod },
		describe: func(o options) string { return o.resyncPeriod.String() }},
	{option: "WithTweakListOptions", same: func(a, b options) bool { return describeTweak(a) == describeTweak(b) },
		describe: describeTweak},
	{option: "WithErrorHandler", same: func(a, b options) bool { return sameFunc(a.errorHandler, b.errorHandler) },
		describe: func(o options) string { return funcName(o.errorHandler) }},
	{option: "WithStateHandler", same: func(a, b options) bool { return sameFunc(a.stateHandler, b.stateHandler) },
		describe: func(o options) string { return funcName(o.stateHandler) }},
	{option: "WithStopWhenNotServed", same: func(a, b options) bool { return a.stopWhenGone == b.stopWhenGone },
		describe: func(o options) string { return onOrOff(o.stopWhenGone) }},
	{option: "WithMetricsProvider", same: func(a, b options) bool { return sameValue(metricsProviderOf(a), metricsProviderOf(b)) },
		describe: func(o options) string { return describeValue(metricsProviderOf(o)) }},
	{option: "WithExampleObject", same: func(a, b options) bool { return a.exampleType == b.exampleType },
		describe: func(o options) string {
			if o.exampleType == nil {
				return "none"
			}
			return o.exampleType.String()
		}},
	{option: "WithInformerName", same: func(a, b options) bool { return a.informerName == b.informerName },
		describe: func(o options) string {
			if o.informerName == nil {
				return "none"
			}
			return fmt.Sprintf("%q", o.informerName.Name())
		}},
}

func onOrOff(on bool) string {
	if on {
		return "on"
	}
	return "off"
}

func describeCompact(o options) string {
	if o.compact == nil {
		return "none (the default store)"
	}
	return fmt.Sprintf("WithCompactStore(%d)", o.compact.decodedObjects)
}

// describeTweak describes the tweak by what it sets on an empty
// metav1.ListOptions, selectors aside (they name the informer, see
// WithTweakListOptions), as JSON: two tweaks that set the same are the
// same setting. "none" if it sets nothing else.
func describeTweak(o options) string {
	if o.tweakListOptions == nil {
		return "none"
	}
	var tweaked metav1.ListOptions
	o.tweakListOptions(&tweaked)
	tweaked.LabelSelector, tweaked.FieldSelector = "", ""
	text, err := json.Marshal(tweaked)
	if err != nil {
		return fmt.Sprintf("%+v", tweaked)
	}
	if string(text) == "{}" {
		return "none"
	}
	return "a tweak that sets " + string(text)
}

// sameFunc reports whether a and b are provably the same function value:
// both nil, or the same closure object. Go cannot compare functions; a
// func value is, in the gc toolchain's ABI since Go 1.1, a pointer to a
// closure object (the code pointer and the captured variables), and
// comparing those pointers tells the same value passed again (a variable,
// a named function, a literal that captures nothing: one static closure
// object each) from another one. It never says "same" of functions that
// may behave differently; it says "different" of equal functions made
// twice: a closure or method value made again (each evaluation makes a new
// closure object), or two literals with the same body. reflect's
// Value.Pointer cannot do this: it returns the code pointer, which closures
// of one literal with different captured variables share.
func sameFunc[F any](a, b F) bool {
	return funcIdentity(a) == funcIdentity(b)
}

// funcIdentity is the closure object of fn, a func value (nil for a nil
// one); it is nil for a value of another kind, which sameFunc is not
// given.
func funcIdentity[F any](fn F) unsafe.Pointer {
	if reflect.TypeFor[F]().Kind() != reflect.Func {
		return nil
	}
	return *(*unsafe.Pointer)(unsafe.Pointer(&fn))
}

// funcName describes fn by the name of its code, "none" if nil.
func funcName[F any](fn F) string {
	v := reflect.ValueOf(fn)
	if v.Kind() != reflect.Func || v.IsNil() {
		return "none"
	}
	if f := runtime.FuncForPC(v.Pointer()); f != nil {
		return "func " + f.Name()
	}
	return "a func"
}

// sameNameNote follows the description of a setting asked for that reads
// as the informer's but is another value (sameFunc, sameValue).
const sameNameNote = " (another value of the same name: a closure, method value or provider made again is another one; pass the same value)"

// sameValue reports whether a and b are equal comparable values (nil
// both); values that cannot be compared are not the same.
func sameValue(a, b any) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	if va.Type() != vb.Type() || !va.Comparable() || !vb.Comparable() {
		return false
	}
	return va.Equal(vb)
}

func describeValue(v any) string {
	if v == nil {
		return "none"
	}
	return fmt.Sprintf("a %T", v)
}
