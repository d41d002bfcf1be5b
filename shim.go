package generic

import (
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
)

// NewGenericLister adapts a Lister[T] to client-go's untyped
// cache.GenericLister, for code written against informers.GenericInformer.
// It adds one slice copy per List; Get costs the same. Where the Lister
// returns an error with some objects (ErrUnexpectedType), List returns the
// error alone, as client-go's GenericLister does for any error.
func NewGenericLister[T runtime.Object](lister Lister[T]) cache.GenericLister {
	return genericLister[T]{lister: lister}
}

// NewGenericNamespaceLister adapts a NamespaceLister[T] to client-go's
// cache.GenericNamespaceLister.
func NewGenericNamespaceLister[T runtime.Object](lister NamespaceLister[T]) cache.GenericNamespaceLister {
	return genericNamespaceLister[T]{lister: lister}
}

// NewGenericInformer adapts an Informer[T] to client-go's
// informers.GenericInformer. Adapters of the same Informer compare equal.
func NewGenericInformer[T Object](informer Informer[T]) informers.GenericInformer {
	return genericInformer[T]{informer: informer}
}

type genericLister[T runtime.Object] struct{ lister Lister[T] }

func (l genericLister[T]) List(selector labels.Selector) ([]runtime.Object, error) {
	return toRuntimeObjects(l.lister.List(selector))
}

func (l genericLister[T]) Get(name string) (runtime.Object, error) {
	return toRuntimeObject(l.lister.Get(name))
}

func (l genericLister[T]) ByNamespace(namespace string) cache.GenericNamespaceLister {
	return genericNamespaceLister[T]{lister: l.lister.Namespace(namespace)}
}

type genericNamespaceLister[T runtime.Object] struct{ lister NamespaceLister[T] }

func (l genericNamespaceLister[T]) List(selector labels.Selector) ([]runtime.Object, error) {
	return toRuntimeObjects(l.lister.List(selector))
}

func (l genericNamespaceLister[T]) Get(name string) (runtime.Object, error) {
	return toRuntimeObject(l.lister.Get(name))
}

type genericInformer[T Object] struct{ informer Informer[T] }

func (i genericInformer[T]) Informer() cache.SharedIndexInformer { return i.informer.Informer() }

func (i genericInformer[T]) Lister() cache.GenericLister {
	return NewGenericLister(i.informer.Lister())
}

func toRuntimeObjects[T runtime.Object](objs []T, err error) ([]runtime.Object, error) {
	if err != nil {
		return nil, err
	}
	ret := make([]runtime.Object, len(objs))
	for i, obj := range objs {
		ret[i] = obj
	}
	return ret, nil
}

// toRuntimeObject returns a nil interface on error, not a typed nil pointer
// boxed in a non-nil runtime.Object.
func toRuntimeObject[T runtime.Object](obj T, err error) (runtime.Object, error) {
	if err != nil {
		return nil, err
	}
	return obj, nil
}
