package generic

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
)

// Converter turns an object delivered by a list or watch into T.
//
// Informers call it once per object, at ingest, inside their list and watch
// (never in the cache's transform, which would fail a whole list for one bad
// object, and never on reads): what the cache holds is already T, and a
// Lister's Get costs one indexer lookup and one type assertion.
//
// A Converter must not modify obj and must be safe for concurrent use. An
// error skips that one object; it is reported as a *ConversionError and the
// informer goes on with every other object.
type Converter[T runtime.Object] func(obj runtime.Object) (T, error)

// Identity returns the Converter for a source that already delivers T, such
// as a typed REST client or, for T = *unstructured.Unstructured, the dynamic
// client. It only asserts the type; a value of another type is an error
// wrapping ErrUnexpectedType that names both types.
func Identity[T runtime.Object]() Converter[T] {
	return func(obj runtime.Object) (T, error) {
		if t, ok := obj.(T); ok {
			return t, nil
		}
		var zero T
		return zero, fmt.Errorf("%w: got %T, want %T", ErrUnexpectedType, obj, zero)
	}
}

// FromUnstructured returns the Converter for a typed view of a dynamic
// source: each runtime.Unstructured (such as *unstructured.Unstructured) is
// converted into a new T with apimachinery's
// runtime.DefaultUnstructuredConverter. Fields T does not know are dropped; a
// field of the wrong type (a string where T has an integer) is an error. A
// value that already is a T is passed through unchanged.
//
// T must be a pointer to a struct; for any other T every call returns an
// error wrapping ErrUnexpectedType.
func FromUnstructured[T runtime.Object]() Converter[T] {
	newT, err := newObjectFunc[T]()
	if err != nil {
		return func(runtime.Object) (T, error) {
			var zero T
			return zero, err
		}
	}
	return func(obj runtime.Object) (T, error) {
		if t, ok := obj.(T); ok {
			return t, nil
		}
		var zero T
		u, ok := obj.(runtime.Unstructured)
		if !ok {
			return zero, fmt.Errorf("%w: got %T, want an unstructured object to convert to %T", ErrUnexpectedType, obj, zero)
		}
		t := newT()
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.UnstructuredContent(), t); err != nil {
			return zero, fmt.Errorf("from unstructured to %T: %w", zero, err)
		}
		return t, nil
	}
}
