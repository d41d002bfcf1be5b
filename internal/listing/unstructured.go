// Package listing reads an informer's cache for a Lister of
// *unstructured.Unstructured: label selectors matched in place, in each
// object's metadata.labels map, a batch of objects at a time, where
// client-go copies every object's labels into a new map (GetLabels). The
// answers are exactly client-go's (unstructured_fuzz_test.go).
//
// It imports nothing of this module.
package listing

import (
	"reflect"
	"sync"
	"unsafe"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

// Unstructured is client-go's cache.ListAllByNamespace (and, for
// metav1.NamespaceAll, cache.ListAll) for a Lister of
// *unstructured.Unstructured, with one difference: the labels of an
// *unstructured.Unstructured are matched where they are, in its
// metadata.labels map, instead of being copied into a new map per object by
// GetLabels (two allocations an object, most of the time an unstructured
// List took; see matcher), and read a batch of objects at a time (see
// appendMatching). The labels of an object of another type (a wrong cache)
// are read as client-go reads them: meta.Accessor and GetLabels.
//
// selector must not be nil.
func Unstructured(indexer cache.Indexer, namespace string, selector labels.Selector, appendFn cache.AppendFunc) error {
	if labels.MatchesNothing(selector) {
		return nil
	}
	selectAll := selector.Empty()
	if namespace == metav1.NamespaceAll {
		return appendMatching(indexer.List(), selector, selectAll, appendFn)
	}
	items, err := indexer.Index(cache.NamespaceIndex, &metav1.ObjectMeta{Namespace: namespace})
	if err != nil {
		// No namespace index: the slow search client-go does, with its
		// warning.
		klog.TODO().Info("Warning: can not retrieve list of objects using index", "err", err)
		for _, m := range indexer.List() {
			metadata, err := meta.Accessor(m)
			if err != nil {
				return err
			}
			if metadata.GetNamespace() != namespace {
				continue
			}
			if err := appendMatching([]any{m}, selector, false, appendFn); err != nil {
				return err
			}
		}
		return nil
	}
	return appendMatching(items, selector, selectAll, appendFn)
}

// appendMatching calls appendFn on each of items whose labels selector
// matches (on every item if selectAll). An item without object metadata is
// meta.Accessor's error, as in client-go.
func appendMatching(items []any, selector labels.Selector, selectAll bool, appendFn cache.AppendFunc) error {
	if selectAll {
		// Avoid computing labels of the objects to speed up common flows
		// of listing all objects (as client-go does).
		for _, item := range items {
			appendFn(item)
		}
		return nil
	}
	m := newMatcher(selector)
	defer m.release()
	// The labels of an unstructured object are three map lookups away
	// (content, metadata, labels), each a few cache misses on a cache
	// larger than the CPU's, where a typed object's are one. Reading them
	// a batch of objects at a time, one level per pass, makes the lookups
	// of different objects independent of each other, so that the CPU
	// overlaps their misses instead of waiting for each in turn. Measured
	// with e2e/bench's BenchmarkReadInterleaved (10,000 Pods from a cold
	// CPU cache, against the typed Lister): List took 1.95x typed's time
	// object by object, 1.0x batched; Namespace(ns).List 1.5x and 0.93x.
	// Before each level's lookups, a pass reads the maps' headers
	// (readHeaders): List then took 0.85x typed's time from a cold cache
	// where it took 1.0x without, Namespace(ns).List 0.85x where 0.95x.
	// A last pass reads the value of the selector's first key in each
	// labels map, and the string it is (readAhead); the match reads that
	// value from what the pass read. Over objects whose labels maps are
	// shared (the drop-in's ingest) it costs nothing measurable; over a
	// cache.Indexer filled by hand with decoded objects, each with a labels
	// map of its own, it took List from 2.01x typed's time to 1.71x cold,
	// 2.83x to 2.37x warm, and Namespace(ns).List from 1.66x to 1.48x cold
	// (BenchmarkListSelectorDropIn, 10,000 realistic Pods, medians of 6
	// runs before and 6 after). Read from the map a second time by the
	// match, the value cost the warm Namespace(ns).List 5 to 12%, which
	// the pass, finding nothing to overlap there, cannot win back.
	//
	// found[i] is the i-th object's map of the level the passes have
	// reached (content, metadata, then metadata.labels), read in place
	// (valid as long as the object is not changed, which cached objects
	// never are), nil if it has none or is not an *Unstructured: a lookup
	// in a nil map finds nothing, so the passes need no test of their own
	// (an array of flags beside it made the warm Namespace(ns).List 2 to
	// 10% slower).
	var buffer [matchBatch]unstructuredLabels
	var ahead [matchBatch]aheadValue
	for start := 0; start < len(items); start += matchBatch {
		batch := items[start:min(start+matchBatch, len(items))]
		found := buffer[:len(batch)]
		for i, item := range batch {
			found[i] = nil
			if u, isUnstructured := item.(*unstructured.Unstructured); isUnstructured && u != nil {
				found[i] = u.Object
			}
		}
		for _, level := range [...]string{"metadata", "labels"} {
			m.readHeaders(found)
			for i, l := range found {
				found[i], _ = l[level].(map[string]any)
			}
		}
		m.readHeaders(found)
		m.readAhead(found, ahead[:len(found)])
		for i, item := range batch {
			matches, err := m.matches(item, found[i], ahead[i])
			if err != nil {
				return err
			}
			if matches {
				appendFn(item)
			}
		}
	}
	return nil
}

// matchBatch is how many objects appendMatching reads the labels of at a
// time.
const matchBatch = 64

// matcher matches a selector against objects' labels, those of an
// *unstructured.Unstructured in place, allocating nothing (matchers are
// kept for reuse: newMatcher).
type matcher struct {
	selector labels.Selector
	// hasKey is whether the selector has requirements: view.key is then
	// the key of the first, whose value readAhead reads.
	hasKey bool
	// view is the labels the selector matches (see matches), in the
	// matcher so that passing it to the selector allocates nothing.
	view aheadLabels
	// matchesNone is whether selector matches an object without labels,
	// once known (noneKnown).
	matchesNone, noneKnown bool
	// entries is where readHeaders leaves what it read.
	entries int
	// lastValid is the labels map validLabels last found valid (see
	// matches), as reflect's Value.UnsafePointer gives it: the map's
	// runtime pointer, which reflect.DeepEqual also takes for a map's
	// identity (maps cannot be compared with ==). An unsafe.Pointer, not
	// a uintptr, so that it keeps the map alive: no other map can take
	// its address while the matcher serves one List call (release drops
	// it before the matcher is kept for reuse).
	lastValid unsafe.Pointer
}

// matchers keeps matchers for reuse: a matcher escapes to the heap (the
// selector is given a pointer to its view), and a List allocates as many
// times as client-go's typed List does.
var matchers = sync.Pool{New: func() any { return new(matcher) }}

// newMatcher returns a matcher of selector; release it when done.
func newMatcher(selector labels.Selector) *matcher {
	m := matchers.Get().(*matcher)
	*m = matcher{selector: selector}
	if requirements, ok := selector.Requirements(); ok && len(requirements) > 0 {
		m.hasKey = true
		m.view.key = requirements[0].Key()
	}
	return m
}

// release returns m for reuse, holding nothing of the List it served.
func (m *matcher) release() {
	*m = matcher{}
	matchers.Put(m)
}

// readHeaders reads the header of each map of found that is not nil, its
// number of entries, so that the lookups that follow find the headers in the
// CPU's cache: a Go map's lookup reads its header, then its group, two
// misses one after the other, where this loop, a load per map, has the
// misses of many maps under way at once.
func (m *matcher) readHeaders(found []unstructuredLabels) {
	for _, l := range found {
		m.entries += len(l)
	}
}

// matches returns whether the selector matches obj's labels, exactly as it
// matches those (*unstructured.Unstructured).GetLabels returns (a copy,
// from unstructured.NestedNullCoercingStringMap(object, "metadata",
// "labels")). For an *unstructured.Unstructured, l is its metadata.labels
// map, read in place, nil if there is none, and ahead the value readAhead
// read in it:
//
//   - metadata or metadata.labels absent, null, or not a JSON object
//     (l is nil), or an empty map: no labels;
//   - a label whose value is null: present, with value "" (JSON decoding's
//     coercion; unstructuredLabels reads it so);
//   - any label whose value is neither a string nor null: no labels at all
//     (GetLabels drops the whole map on its error; validLabels is false).
//
// For any other object, its labels are read through meta.Accessor and
// GetLabels, as client-go reads them.
func (m *matcher) matches(obj any, l unstructuredLabels, ahead aheadValue) (bool, error) {
	if u, ok := obj.(*unstructured.Unstructured); !ok || u == nil {
		metadata, err := meta.Accessor(obj)
		if err != nil {
			return false, err
		}
		return m.selector.Matches(labels.Set(metadata.GetLabels())), nil
	}
	if len(l) == 0 {
		return m.none(), nil
	}
	// Checking every label's value costs a walk of the map per object: do
	// it only when it can change the answer, that is when the labels as
	// they are give another answer than no labels would; and not again for
	// the map last found valid. The objects a selector matches are most
	// often those of one workload (the Pods of a ReplicaSet, the objects of
	// a Helm release), whose equal labels maps the unstructured decoders
	// share unless sharing is off (internal/share's Interner): the map of one is
	// the map of the next. The walk took 5% of a warm Namespace(ns).List's
	// time (CPU profile); skipping it for the map last found valid cut
	// that read's time by 3 to 6%, and the warm List's by 5 to 19%
	// (e2e/bench, 10,000 Pods, interleaved, in one run).
	matches := m.matchesLabels(l, ahead)
	if matches == m.none() {
		return matches, nil
	}
	p := reflect.ValueOf(l).UnsafePointer()
	if p == m.lastValid {
		return matches, nil
	}
	if !validLabels(l) {
		return m.none(), nil
	}
	m.lastValid = p
	return matches, nil
}

// matchesLabels returns whether the selector matches l, reading the value
// of its first key from ahead if it has one.
func (m *matcher) matchesLabels(l unstructuredLabels, ahead aheadValue) bool {
	if !m.hasKey {
		return m.selector.Matches(l)
	}
	m.view.labels, m.view.ahead = l, ahead
	return m.selector.Matches(&m.view)
}

// none returns whether the selector matches an object without labels.
func (m *matcher) none() bool {
	if !m.noneKnown {
		m.matchesNone = m.selector.Matches(labels.Set(nil))
		m.noneKnown = true
	}
	return m.matchesNone
}

// validLabels returns whether every value of l is a string or null, which
// GetLabels requires of a labels map not to drop it.
func validLabels(l unstructuredLabels) bool {
	for _, v := range l {
		switch v.(type) {
		case string, nil:
		default:
			return false
		}
	}
	return true
}

// unstructuredLabels is an unstructured object's metadata.labels map read as
// a labels.Labels: a string value as itself, null (nil) as "", as GetLabels
// reads them. (Any other value reads as "": the matcher then gives the
// answer of no labels at all, as GetLabels does.) Being a map, it is stored
// in an interface without an allocation.
type unstructuredLabels map[string]any

func (l unstructuredLabels) Has(label string) bool {
	_, ok := l[label]
	return ok
}

func (l unstructuredLabels) Get(label string) string {
	s, _ := l[label].(string)
	return s
}

func (l unstructuredLabels) Lookup(label string) (string, bool) {
	v, ok := l[label]
	if !ok {
		return "", false
	}
	s, _ := v.(string)
	return s, true
}
