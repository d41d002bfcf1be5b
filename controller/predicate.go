package controller

import (
	"reflect"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/generic-informers/generic"
)

// Predicate decides whether an add or an update of an object enqueues:
// for an add, oldObj is nil (the zero T) and newObj the object; for an
// update, the states before and after. Deletes always enqueue. A Predicate
// must not change the objects, which are shared cache state.
type Predicate[T generic.Object] func(oldObj, newObj T) bool

// GenerationChanged passes adds, and updates that changed
// metadata.generation: the server bumps it on changes of the spec, not of
// the status or the metadata, so a controller that writes status is not
// woken by its own status writes. Objects whose generation the server does
// not keep (it stays 0) pass every update.
func GenerationChanged[T generic.Object](oldObj, newObj T) bool {
	var none T
	return oldObj == none || newObj.GetGeneration() == 0 || oldObj.GetGeneration() != newObj.GetGeneration()
}

// LabelsChanged passes adds, and updates that changed metadata.labels.
func LabelsChanged[T generic.Object](oldObj, newObj T) bool {
	var none T
	return oldObj == none || !reflect.DeepEqual(oldObj.GetLabels(), newObj.GetLabels())
}

// LabelsMatch returns a Predicate that passes adds and updates of objects
// whose labels match selector, before or after the update (so that an
// object leaving the selection enqueues too). A nil selector matches
// nothing.
func LabelsMatch[T generic.Object](selector labels.Selector) Predicate[T] {
	return func(oldObj, newObj T) bool {
		if selector == nil {
			return false
		}
		var none T
		if oldObj != none && selector.Matches(labels.Set(oldObj.GetLabels())) {
			return true
		}
		return selector.Matches(labels.Set(newObj.GetLabels()))
	}
}

// isNil reports whether v is nil or holds a nil pointer.
func isNil(v any) bool {
	if v == nil {
		return true
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Pointer, reflect.Interface, reflect.Map, reflect.Slice, reflect.Func, reflect.Chan:
		return rv.IsNil()
	}
	return false
}
