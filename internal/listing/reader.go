package listing

import (
	"errors"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
)

// Reader reads the values of type T of an informer's cache.Indexer, as a
// Lister does, with checked type assertions: a value of another type is
// never returned and never panics; the first one met is reported as
// WrongType's error, beside the T values read.
type Reader[T any] struct {
	// Indexer is the cache; nil makes every read an error.
	Indexer cache.Indexer
	// Resource names the objects in not-found errors.
	Resource schema.GroupResource
	// WrongType is the error of a value obj of the cache that is not a T.
	WrongType func(resource schema.GroupResource, obj any) error
	// Decode, if not nil, turns a value of the cache into the T it stands
	// for (a compact store's record): selectors and indexes are matched on
	// the value, and only the values returned are decoded.
	Decode func(obj any) (any, error)
}

// value returns obj as a T, through Decode if set; false, with the error
// to report, if it is not one.
func (r *Reader[T]) value(obj any) (T, error) {
	var zero T
	if r.Decode != nil {
		decoded, err := r.Decode(obj)
		if err != nil {
			return zero, err
		}
		obj = decoded
	}
	t, ok := obj.(T)
	if !ok {
		return zero, r.WrongType(r.Resource, obj)
	}
	return t, nil
}

var errNilIndexer = errors.New("generic: Lister over a nil cache.Indexer")

// List returns the T values in namespace (metav1.NamespaceAll for all)
// whose labels selector matches: client-go's cache.ListAllByNamespace
// (which uses the namespace index when there is one) or, for T =
// *unstructured.Unstructured, Unstructured, which matches labels in place
// instead of copying them. A nil selector matches nothing.
func (r *Reader[T]) List(namespace string, selector labels.Selector) ([]T, error) {
	if r.Indexer == nil {
		return nil, errNilIndexer
	}
	if selector == nil {
		// client-go's ListAll panics on a nil selector.
		return nil, nil
	}
	var ret []T
	var mismatch error
	appendFn := func(obj any) {
		if t, err := r.value(obj); err == nil {
			ret = append(ret, t)
		} else if mismatch == nil {
			mismatch = err
		}
	}
	var err error
	if _, isUnstructured := any(*new(T)).(*unstructured.Unstructured); isUnstructured {
		err = Unstructured(r.Indexer, namespace, selector, appendFn)
	} else {
		err = cache.ListAllByNamespace(r.Indexer, namespace, selector, appendFn)
	}
	if err != nil {
		return ret, err
	}
	return ret, mismatch
}

// Get returns the T value of cache key key; if there is none, an error
// that apierrors.IsNotFound, naming name.
func (r *Reader[T]) Get(key, name string) (T, error) {
	var zero T
	if r.Indexer == nil {
		return zero, errNilIndexer
	}
	obj, exists, err := r.Indexer.GetByKey(key)
	if err != nil {
		return zero, err
	}
	if !exists {
		return zero, apierrors.NewNotFound(r.Resource, name)
	}
	return r.value(obj)
}

// ByIndex returns the T values whose index function named indexName
// produced indexedValue. An unknown indexName is an error. An Indexer that
// answers values and an error together (a partial answer: the informer's
// store, whose index function failed on some objects) has both returned,
// the error first if a value of another type was met too.
func (r *Reader[T]) ByIndex(indexName, indexedValue string) ([]T, error) {
	if r.Indexer == nil {
		return nil, errNilIndexer
	}
	objs, err := r.Indexer.ByIndex(indexName, indexedValue)
	if objs == nil && err != nil {
		return nil, err
	}
	ret := make([]T, 0, len(objs))
	var mismatch error
	for _, obj := range objs {
		if t, err := r.value(obj); err == nil {
			ret = append(ret, t)
		} else if mismatch == nil {
			mismatch = err
		}
	}
	if err != nil && mismatch != nil {
		return ret, errors.Join(err, mismatch)
	}
	if err != nil {
		return ret, err
	}
	return ret, mismatch
}
