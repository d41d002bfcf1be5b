package generic

import (
	"fmt"
	"sync"
	"sync/atomic"

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
	// match selector, in no particular order. A nil selector matches
	// nothing; use labels.Everything() for all objects.
	List(selector labels.Selector) ([]T, error)
	// Get returns the object stored under key name, which is how
	// cluster-scoped objects are keyed. For a namespaced object use
	// Namespace(ns).Get(name). If there is none, the error satisfies
	// apierrors.IsNotFound and names the Lister's GroupResource.
	Get(name string) (T, error)
	// Namespace returns a NamespaceLister for the objects in namespace.
	Namespace(namespace string) NamespaceLister[T]
	// ByIndex returns the objects whose index function named indexName
	// produced indexedValue. An unknown indexName is an error.
	ByIndex(indexName, indexedValue string) ([]T, error)
}

// NamespaceLister reads the objects of one namespace from the cache. It has
// exactly the methods of client-go's dynamiclister.NamespaceLister, with T
// for *unstructured.Unstructured. Objects returned are read-only.
type NamespaceLister[T runtime.Object] interface {
	// List returns the objects in this namespace whose labels match
	// selector. A nil selector matches nothing.
	List(selector labels.Selector) ([]T, error)
	// Get returns the object with this name in this namespace (cache key
	// "namespace/name"). If there is none, the error satisfies
	// apierrors.IsNotFound and names the GroupResource.
	Get(name string) (T, error)
}

// NewLister returns a Lister of the objects in indexer, which must hold
// values of type T keyed as cache.MetaNamespaceKeyFunc keys them ("name" or
// "namespace/name"), as every informer's indexer does. resource names the
// objects in not-found errors.
//
// A nil indexer makes every read return an error, not panic. A value of
// another type in the indexer never panics either: Get returns an error
// wrapping ErrUnexpectedType, and List and ByIndex return the T values
// together with such an error.
func NewLister[T runtime.Object](indexer cache.Indexer, resource schema.GroupResource) Lister[T] {
	return &lister[T]{read: listing.Reader[T]{Indexer: indexer, Resource: resource, WrongType: unexpectedType[T]}}
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
	return l.read.ByIndex(indexName, indexedValue)
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

func unexpectedType[T runtime.Object](resource schema.GroupResource, obj any) error {
	var zero T
	return fmt.Errorf("%w: the cache of %s holds a %T, not a %T", ErrUnexpectedType, resource, obj, zero)
}
