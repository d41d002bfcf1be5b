package generic

import (
	"fmt"

	"k8s.io/client-go/tools/cache"

	"github.com/generic-informers/generic/internal/telemetry"
)

// typedHandler adapts a cache.TypedResourceEventHandler[T] to the untyped
// cache.ResourceEventHandler that a SharedIndexInformer calls.
//
// It does what client-go's own adapter (cache.TypedSharedIndexInformer)
// does, with checked type assertions: a value that is not a T is reported
// and dropped instead of panicking the informer's goroutine, and a delete
// whose tombstone holds no T still reaches the handler with the tombstone,
// so that no delete is lost.
type typedHandler[T Object] struct {
	handler cache.TypedResourceEventHandler[T]
	report  func(error)
	// cursor is the handler's place in the informer's delivery clock,
	// which measures the delivery latency.
	cursor telemetry.Cursor
}

func (h *typedHandler[T]) OnAdd(obj any, isInInitialList bool) {
	h.cursor.Delivered(obj)
	t, ok := obj.(T)
	if !ok {
		h.report(unexpectedEventType[T]("add", obj))
		return
	}
	h.handler.OnAdd(t, isInInitialList)
}

func (h *typedHandler[T]) OnUpdate(oldObj, newObj any) {
	h.cursor.Delivered(newObj)
	oldT, okOld := oldObj.(T)
	newT, okNew := newObj.(T)
	if !okOld || !okNew {
		h.report(unexpectedEventType[T]("update", newObj))
		return
	}
	h.handler.OnUpdate(oldT, newT)
}

// OnDelete delivers a cache.DeletedObject[T]: OptionalObj is the deleted
// object, or, when the informer missed the delete (a relist found the object
// gone), the last state it had cached, with FinalStateUnknown holding the
// tombstone.
func (h *typedHandler[T]) OnDelete(obj any) {
	h.cursor.Delivered(obj)
	switch o := obj.(type) {
	case T:
		h.handler.OnDelete(cache.DeletedObject[T]{OptionalObj: o})
	case cache.DeletedFinalStateUnknown:
		deleted := cache.DeletedObject[T]{FinalStateUnknown: &o}
		if t, ok := o.Obj.(T); ok {
			deleted.OptionalObj = t
		} else if o.Obj != nil {
			h.report(unexpectedEventType[T]("delete", o.Obj))
		}
		h.handler.OnDelete(deleted)
	default:
		h.report(unexpectedEventType[T]("delete", obj))
	}
}

func unexpectedEventType[T Object](verb string, obj any) error {
	var zero T
	return fmt.Errorf("%w: %s event for a %T, not a %T", ErrUnexpectedType, verb, obj, zero)
}
