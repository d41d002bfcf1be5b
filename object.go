package generic

import (
	"fmt"
	"reflect"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Object is what an informer caches: a Kubernetes API object with object
// metadata. Every built-in type, every CRD Go type with an embedded
// ObjectMeta, *unstructured.Unstructured and *metav1.PartialObjectMetadata
// satisfy it when used as a pointer.
//
// Object is comparable so that it also satisfies client-go's cache.Object,
// which typed event handlers (cache.TypedResourceEventHandler[T]) require:
// a nil T can then be told apart from a deleted object whose final state is
// unknown.
type Object interface {
	runtime.Object
	metav1.Object
	comparable
}

// newObjectFunc returns a function that allocates a new, empty T, for T a
// pointer to a struct such as *corev1.Pod. Converters decode into it, and
// informers use one as their example object. It fails for any other T
// (an interface type or a non-pointer type), which cannot be allocated.
func newObjectFunc[T runtime.Object]() (func() T, error) {
	typ := reflect.TypeFor[T]()
	if typ.Kind() != reflect.Pointer || typ.Elem().Kind() != reflect.Struct {
		return nil, fmt.Errorf("%w: %v is not a pointer to a struct", ErrUnexpectedType, typ)
	}
	elem := typ.Elem()
	return func() T {
		// reflect.New(elem) is a *elem, which is exactly T: this assertion
		// cannot fail.
		return reflect.New(elem).Interface().(T)
	}, nil
}

// bookmarkFunc returns the function the list/watch chain makes its own
// bookmarks of T with (a reshard step's, a bookmark of another type the
// source sent): newT; or for T an interface type (typed.Object, the T of
// informers of a kind chosen at run time), one that makes an empty object
// of exampleType (WithExampleObject's, which typed.InformerForKind gives),
// or without one, an empty *metav1.PartialObjectMetadata if that is a T.
// Any T does for a bookmark there: the informer of an interface T checks no
// type, and a bookmark carries only a resourceVersion and annotations.
// Without it, such an informer relisted at every reshard step.
func bookmarkFunc[T runtime.Object](newT func() T, exampleType reflect.Type) func() T {
	if newT != nil {
		return newT
	}
	if exampleType != nil {
		if fromExample, err := exampleConstructor[T](exampleType); err == nil {
			return fromExample
		}
	}
	if _, ok := any(&metav1.PartialObjectMetadata{}).(T); !ok {
		return nil
	}
	return func() T {
		// Checked above: a *metav1.PartialObjectMetadata is a T.
		t, _ := any(&metav1.PartialObjectMetadata{}).(T)
		return t
	}
}

// isNilPointer reports whether v holds a nil pointer (a typed nil in an
// interface), which v == nil does not catch.
func isNilPointer(v any) bool {
	rv := reflect.ValueOf(v)
	return rv.Kind() == reflect.Pointer && rv.IsNil()
}
