package generic

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	"github.com/generic-informers/generic/internal/listing"
)

// Lister reads objects of type T from an informer's cache (a cache.Indexer),
// the typed counterpart of client-go's generated listers and of
// dynamiclister.Lister.
//
// Objects returned are shared cache state: read-only. Copy one (DeepCopy)
// before changing it. A Lister is safe for concurrent use.
type Lister[T runtime.Object] interface {
	// List returns every cached object, in all namespaces, whose labels
	// match selector. A nil selector matches nothing; use
	// labels.Everything() for all objects. The order is unspecified and
	// may change from call to call, as client-go's (sorting every List would
	// cost O(n log n) on the largest reads); a test that compares a List
	// sorts it first: SortByNamespaceName.
	List(selector labels.Selector) ([]T, error)
	// Get returns the object stored under key name, which is how
	// cluster-scoped objects are keyed. For a namespaced object use
	// Namespace(ns).Get(name). If there is none, the error satisfies
	// apierrors.IsNotFound and names the Lister's GroupResource.
	Get(name string) (T, error)
	// Namespace returns a NamespaceLister for the objects in namespace.
	Namespace(namespace string) NamespaceLister[T]
	// ByIndex returns the objects, in all namespaces, whose index function
	// named indexName produced indexedValue, sorted by namespace, then
	// name (SortByNamespaceName's order), the same at every call. Sorting
	// reads each object's namespace and name once; index buckets are
	// small. An unknown indexName is the indexer's error, as in client-go;
	// no object is an empty slice and no error. While the index's function
	// fails on some objects, which are then in none of its values, the
	// error is a *PartialIndexError naming them, beside the objects found.
	ByIndex(indexName, indexedValue string) ([]T, error)
}

// NamespaceLister reads the objects of one namespace from the cache. It has
// the methods of client-go's dynamiclister.NamespaceLister, with T for
// *unstructured.Unstructured, and ByIndex. Objects returned are read-only.
// A NamespaceLister is safe for concurrent use.
type NamespaceLister[T runtime.Object] interface {
	// List returns the objects in this namespace whose labels match
	// selector. A nil selector matches nothing. The order is unspecified,
	// as Lister.List's.
	List(selector labels.Selector) ([]T, error)
	// Get returns the object with this name in this namespace (cache key
	// "namespace/name"). If there is none, the error satisfies
	// apierrors.IsNotFound and names the GroupResource.
	Get(name string) (T, error)
	// ByIndex returns the objects in this namespace whose index function
	// named indexName produced indexedValue, sorted by name: Lister.ByIndex
	// of this namespace's objects only (all namespaces' for
	// metav1.NamespaceAll). It reads the whole index bucket, in all
	// namespaces, as Lister.ByIndex does, and keeps this namespace's. An
	// unknown indexName is the indexer's error, as in client-go; no object
	// is an empty slice and no error. While the index's function fails on
	// some objects of this namespace, the error is a *PartialIndexError
	// naming them, beside the objects found (objects of other namespaces
	// cannot be in the answer, whatever their values).
	ByIndex(indexName, indexedValue string) ([]T, error)
}

// NewLister returns a Lister of the objects in indexer, which must hold
// values of type T keyed as cache.MetaNamespaceKeyFunc keys them ("name" or
// "namespace/name"), as every informer's indexer does. resource names the
// objects in not-found errors.
//
// A nil indexer makes every read return an error, not panic. A value of
// another type in the indexer never panics either: Get returns an error
// wrapping ErrUnexpectedType, and List and ByIndex return the T values
// together with such an error. An indexer whose ByIndex answers objects
// and an error together (an informer's Informer().GetIndexer(), with a
// *PartialIndexError) has both returned by ByIndex.
func NewLister[T runtime.Object](indexer cache.Indexer, resource schema.GroupResource) Lister[T] {
	return newLister[T](indexer, resource, nil)
}

// newLister is NewLister over a store whose values decode, if not nil,
// turns into objects (a compact store's records): label selectors and
// indexes are matched on what the store holds, and only the values
// returned are decoded.
func newLister[T runtime.Object](indexer cache.Indexer, resource schema.GroupResource, decode func(any) (any, error)) Lister[T] {
	return &lister[T]{read: listing.Reader[T]{Indexer: indexer, Resource: resource, WrongType: unexpectedType[T], Decode: decode}}
}

type lister[T runtime.Object] struct {
	read listing.Reader[T]
	// namespaces caches the NamespaceLister of each namespace asked for,
	// so that Namespace(ns).Get(name), the commonest read, allocates
	// nothing but its key; see maxCachedNamespaces.
	namespaces sync.Map // string -> *namespaceLister[T]
	cached     atomic.Int32
}

// maxCachedNamespaces bounds the namespaces whose NamespaceLister is kept:
// past it (namespaces that came and went), Namespace allocates a new one
// each call, as client-go's listers do.
const maxCachedNamespaces = 10000

func (l *lister[T]) List(selector labels.Selector) ([]T, error) {
	return l.read.List(metav1.NamespaceAll, selector)
}

func (l *lister[T]) Get(name string) (T, error) { return l.read.Get(name, name) }

func (l *lister[T]) Namespace(namespace string) NamespaceLister[T] {
	if cached, ok := l.namespaces.Load(namespace); ok {
		return cached.(*namespaceLister[T])
	}
	nl := &namespaceLister[T]{read: l.read, namespace: namespace}
	if l.cached.Load() < maxCachedNamespaces {
		if cached, loaded := l.namespaces.LoadOrStore(namespace, nl); loaded {
			return cached.(*namespaceLister[T])
		}
		l.cached.Add(1)
	}
	return nl
}

func (l *lister[T]) ByIndex(indexName, indexedValue string) ([]T, error) {
	objs, err := l.read.ByIndex(indexName, indexedValue)
	return sortedIn(objs, metav1.NamespaceAll), err
}

type namespaceLister[T runtime.Object] struct {
	read      listing.Reader[T]
	namespace string
}

func (l *namespaceLister[T]) List(selector labels.Selector) ([]T, error) {
	return l.read.List(l.namespace, selector)
}

func (l *namespaceLister[T]) Get(name string) (T, error) {
	return l.read.Get(l.namespace+"/"+name, name)
}

func (l *namespaceLister[T]) ByIndex(indexName, indexedValue string) ([]T, error) {
	objs, err := l.read.ByIndex(indexName, indexedValue)
	return sortedIn(objs, l.namespace), partialIn(err, l.namespace)
}

// partialIn is err with a *PartialIndexError's keys narrowed to those of
// namespace (all of them for metav1.NamespaceAll): nil if none is left. An
// error that wraps a *PartialIndexError with another is left as it is.
func partialIn(err error, namespace string) error {
	partial, ok := err.(*PartialIndexError) //nolint:errorlint // only the error as Reader returns it alone
	if !ok || namespace == metav1.NamespaceAll {
		return err
	}
	var keys []string
	for _, key := range partial.Keys {
		if ns, _, _ := cache.SplitMetaNamespaceKey(key); ns == namespace {
			keys = append(keys, key)
		}
	}
	if len(keys) == 0 {
		return nil
	}
	return &PartialIndexError{Index: partial.Index, Keys: keys}
}

// SortByNamespaceName sorts objs in place by namespace, then name, and
// returns objs: the order of ByIndex. (Cluster-scoped objects have no
// namespace and sort by name; objects without object metadata sort first.)
// Lister.List returns its objects in an unspecified order, as client-go's
// listers do: a test that compares what a List returns with what it wants
// sorts both with SortByNamespaceName, as in
//
//	pods, err := lister.List(labels.Everything())
//	...
//	if diff := cmp.Diff(want, generic.SortByNamespaceName(pods)); diff != "" {
//
// It reads each object's metadata once and does not change the objects,
// only their places in objs (a List's slice is the caller's; the objects
// are the cache's).
func SortByNamespaceName[T runtime.Object](objs []T) []T {
	return sortedIn(objs, metav1.NamespaceAll)
}

// sortedIn keeps the objects of objs that are in namespace (all of them
// for metav1.NamespaceAll) and sorts them by namespace, then name, in
// objs' array, reading each object's metadata once. It returns the
// sorted objects.
func sortedIn[T any](objs []T, namespace string) []T {
	if namespace == metav1.NamespaceAll && len(objs) < 2 {
		return objs
	}
	// The metadata read once per object, not at each comparison (an
	// *unstructured.Unstructured's namespace and name are map lookups),
	// on the stack for the small index buckets.
	var buffer [insertionSortMax]sortEntry[T]
	entries := buffer[:0]
	for _, obj := range objs {
		m := metadataOf(obj)
		var ns, name string
		if m != nil {
			ns = m.GetNamespace()
		}
		if namespace != metav1.NamespaceAll && ns != namespace {
			continue
		}
		if m != nil {
			name = m.GetName()
		}
		entries = append(entries, sortEntry[T]{namespace: ns, name: name, obj: obj})
	}
	sortEntries(entries)
	for i, e := range entries {
		objs[i] = e.obj
	}
	// What the namespace filter left behind keeps no cache object alive.
	clear(objs[len(entries):])
	return objs[:len(entries)]
}

// sortEntry is an object with the namespace and name it sorts by.
type sortEntry[T any] struct {
	namespace, name string
	obj             T
}

// before reports whether e sorts before other.
func (e *sortEntry[T]) before(other *sortEntry[T]) bool {
	if e.namespace != other.namespace {
		return e.namespace < other.namespace
	}
	return e.name < other.name
}

// insertionSortMax is the most entries sortEntries sorts by insertion.
const insertionSortMax = 32

// sortEntries sorts entries by namespace, then name. Few entries (an index
// bucket, most of the time) it sorts by binary insertion, which makes
// fewer comparisons than slices.SortFunc and inlines them: about twice as
// fast on 20 entries. More, by slices.SortFunc.
func sortEntries[T any](entries []sortEntry[T]) {
	if len(entries) > insertionSortMax {
		slices.SortFunc(entries, func(a, b sortEntry[T]) int {
			if a.namespace != b.namespace {
				return strings.Compare(a.namespace, b.namespace)
			}
			return strings.Compare(a.name, b.name)
		})
		return
	}
	for i := 1; i < len(entries); i++ {
		e := entries[i]
		lo, hi := 0, i
		for lo < hi {
			mid := int(uint(lo+hi) >> 1)
			if e.before(&entries[mid]) {
				hi = mid
			} else {
				lo = mid + 1
			}
		}
		copy(entries[lo+1:i+1], entries[lo:i])
		entries[lo] = e
	}
}

// metadataOf is obj's object metadata, nil if it has none.
func metadataOf(obj any) metav1.Object {
	if m, ok := obj.(metav1.Object); ok {
		return m
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil
	}
	return m
}

func unexpectedType[T runtime.Object](resource schema.GroupResource, obj any) error {
	var zero T
	return fmt.Errorf("%w: the cache of %s holds a %T, not a %T", ErrUnexpectedType, resource, obj, zero)
}
