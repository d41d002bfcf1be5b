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

// isNilPointer reports whether v holds a nil pointer (a typed nil in an
// interface), which v == nil does not catch.
func isNilPointer(v any) bool {
	rv := reflect.ValueOf(v)
	return rv.Kind() == reflect.Pointer && rv.IsNil()
}
