package ctrlcache

import (
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/typed"
)

// viewKind is which of the Registry's views holds an informer: typed
// objects of the scheme's Go types, *unstructured.Unstructured, or
// *metav1.PartialObjectMetadata. controller-runtime keeps one informer per
// kind and view too (its tracker's Structured, Unstructured and Metadata).
type viewKind int

const (
	structuredView viewKind = iota
	unstructuredView
	metadataView
)

// viewOf returns the view that serves obj, an object or a list, as
// controller-runtime's informersByType decides it.
func viewOf(obj runtime.Object) viewKind {
	switch obj.(type) {
	case runtime.Unstructured:
		return unstructuredView
	case *metav1.PartialObjectMetadata, *metav1.PartialObjectMetadataList:
		return metadataView
	default:
		return structuredView
	}
}

// view is one Handle of the Registry with its object type erased, for the
// reader and the informer adapter: what they need of a Handle[T] for any T.
type view interface {
	// get returns the cached object namespace/name (namespace empty for
	// a cluster-scoped kind), or found false.
	get(namespace, name string) (obj runtime.Object, found bool, err error)
	// list returns the cached objects of namespace (every namespace if
	// empty) whose labels selector matches.
	list(namespace string, selector labels.Selector) ([]runtime.Object, error)
	// byIndex returns the cached objects indexName maps value to.
	byIndex(indexName, value string) ([]runtime.Object, error)
	// addIndexers adds client-go index functions, each called with the
	// view's objects.
	addIndexers(indexers toolscache.Indexers) error
	// addEventHandler registers handler, called with the view's objects.
	addEventHandler(handler toolscache.ResourceEventHandler, options toolscache.HandlerOptions) (toolscache.ResourceEventHandlerRegistration, error)
	handle() handleMethods
}

// handleMethods are the methods of a generic.Handle that do not name its
// object type.
type handleMethods interface {
	Informer() toolscache.SharedIndexInformer
	HasSynced() bool
	Status() generic.Status
	Ownership() generic.Ownership
	Release() bool
	Done() <-chan struct{}
}

// handleView is the view of a Handle[T].
type handleView[T generic.Object] struct {
	h generic.Handle[T]
}

func (v handleView[T]) handle() handleMethods { return v.h }

func (v handleView[T]) get(namespace, name string) (runtime.Object, bool, error) {
	return getFrom(v.h.Lister(), namespace, name)
}

func (v handleView[T]) list(namespace string, selector labels.Selector) ([]runtime.Object, error) {
	return listFrom(v.h.Lister(), namespace, selector)
}

func (v handleView[T]) byIndex(indexName, value string) ([]runtime.Object, error) {
	objs, err := v.h.Lister().ByIndex(indexName, value)
	return erase(objs), err
}

// getFrom reads namespace/name (name, cluster-scoped) from lister: found
// false for NotFound, which the reader answers with its own error.
func getFrom[T runtime.Object](lister generic.Lister[T], namespace, name string) (runtime.Object, bool, error) {
	var (
		obj T
		err error
	)
	if namespace == "" {
		obj, err = lister.Get(name)
	} else {
		obj, err = lister.Namespace(namespace).Get(name)
	}
	switch {
	case err == nil:
		return obj, true, nil
	case apierrors.IsNotFound(err):
		return nil, false, nil
	}
	return nil, false, err
}

// listFrom lists the objects of namespace (every namespace if empty) that
// selector matches from lister.
func listFrom[T runtime.Object](lister generic.Lister[T], namespace string, selector labels.Selector) ([]runtime.Object, error) {
	var (
		objs []T
		err  error
	)
	if namespace == "" {
		objs, err = lister.List(selector)
	} else {
		objs, err = lister.Namespace(namespace).List(selector)
	}
	return erase(objs), err
}

func (v handleView[T]) addIndexers(indexers toolscache.Indexers) error {
	typedIndexers := make(toolscache.TypedIndexers[T], len(indexers))
	for name, fn := range indexers {
		typedIndexers[name] = func(obj T) ([]string, error) { return fn(obj) }
	}
	return v.h.AddIndexers(typedIndexers)
}

func (v handleView[T]) addEventHandler(handler toolscache.ResourceEventHandler, options toolscache.HandlerOptions) (toolscache.ResourceEventHandlerRegistration, error) {
	return v.h.AddEventHandler(untypedHandler[T]{handler}, options)
}

func erase[T runtime.Object](objs []T) []runtime.Object {
	out := make([]runtime.Object, len(objs))
	for i, obj := range objs {
		out[i] = obj
	}
	return out
}

// untypedHandler hands a Handle's typed events to a client-go
// ResourceEventHandler, as a client-go informer would: deletes whose
// final state is unknown arrive as a cache.DeletedFinalStateUnknown
// tombstone holding the last state cached.
type untypedHandler[T generic.Object] struct {
	handler toolscache.ResourceEventHandler
}

func (u untypedHandler[T]) OnAdd(obj T, isInInitialList bool) { u.handler.OnAdd(obj, isInInitialList) }

func (u untypedHandler[T]) OnUpdate(oldObj, newObj T) { u.handler.OnUpdate(oldObj, newObj) }

func (u untypedHandler[T]) OnDelete(deleted toolscache.DeletedObject[T]) {
	if deleted.FinalStateUnknown != nil {
		u.handler.OnDelete(toolscache.DeletedFinalStateUnknown{Key: deleted.FinalStateUnknown.Key, Obj: deleted.OptionalObj})
		return
	}
	u.handler.OnDelete(deleted.OptionalObj)
}

// acquireView acquires the informer of gvk in the Registry view kind, with
// opts. The Registry finds gvk's resource as the cache does (the same
// RESTMapper); of a kind not served yet, it hands out an informer that
// waits until the kind is served, then lists the resource discovery gives,
// at its scope, in every view (typed.InformerForKind,
// typed.UnstructuredForKind, typed.MetadataForKind).
func acquireView(factory *typed.Factory, kind viewKind, gvk schema.GroupVersionKind, opts []generic.InformerOption) (view, error) {
	switch kind {
	case unstructuredView:
		h, err := typed.UnstructuredForKind(factory, gvk, opts...)
		if err != nil {
			return nil, err
		}
		return handleView[*unstructured.Unstructured]{h}, nil
	case metadataView:
		h, err := typed.MetadataForKind(factory, gvk, opts...)
		if err != nil {
			return nil, err
		}
		return handleView[*metav1.PartialObjectMetadata]{h}, nil
	default:
		h, err := typed.InformerForKind(factory, gvk, opts...)
		if err != nil {
			return nil, err
		}
		return handleView[typed.Object]{h}, nil
	}
}
