// Package handlers adapts the event handlers users give an informer to
// the untyped cache.ResourceEventHandler client-go's shared informer
// calls: a typed handler (cache.TypedResourceEventHandler[T]) with checked
// type assertions, and a client-go one as it is; both tell the informer's
// delivery clock what they are called with, for the delivery latency.
//
// It imports nothing of this module: reports and the clock are hooks the
// root package hands it.
package handlers

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/cache"
)

// Cursor is a handler's place in its informer's delivery clock: Delivered
// is told of each object the handler is called with. It is used by the
// handler's goroutine only.
type Cursor interface{ Delivered(obj any) }

// Typed adapts a cache.TypedResourceEventHandler[T] to the untyped
// cache.ResourceEventHandler that a SharedIndexInformer calls.
//
// It does what client-go's own adapter (cache.TypedSharedIndexInformer)
// does, with checked type assertions: a value that is not a T is reported
// (WrongType's error, to Report) and dropped instead of panicking the
// informer's goroutine, and a delete whose tombstone holds no T still
// reaches the handler with the tombstone, so that no delete is lost.
type Typed[T cache.Object] struct {
	Handler cache.TypedResourceEventHandler[T]
	// Report receives what went wrong; it must not block.
	Report func(error)
	// WrongType is the error of an event of verb for obj, not a T.
	WrongType func(verb string, obj any) error
	Cursor    Cursor
}

func (h *Typed[T]) OnAdd(obj any, isInInitialList bool) {
	h.Cursor.Delivered(obj)
	t, ok := obj.(T)
	if !ok {
		h.Report(h.WrongType("add", obj))
		return
	}
	h.Handler.OnAdd(t, isInInitialList)
}

func (h *Typed[T]) OnUpdate(oldObj, newObj any) {
	h.Cursor.Delivered(newObj)
	oldT, okOld := oldObj.(T)
	newT, okNew := newObj.(T)
	if !okOld || !okNew {
		h.Report(h.WrongType("update", newObj))
		return
	}
	h.Handler.OnUpdate(oldT, newT)
}

// OnDelete delivers a cache.DeletedObject[T]: OptionalObj is the deleted
// object, or, when the informer missed the delete (a relist found the object
// gone), the last state it had cached, with FinalStateUnknown holding the
// tombstone.
func (h *Typed[T]) OnDelete(obj any) {
	h.Cursor.Delivered(obj)
	switch o := obj.(type) {
	case T:
		h.Handler.OnDelete(cache.DeletedObject[T]{OptionalObj: o})
	case cache.DeletedFinalStateUnknown:
		deleted := cache.DeletedObject[T]{FinalStateUnknown: &o}
		if t, ok := o.Obj.(T); ok {
			deleted.OptionalObj = t
		} else if o.Obj != nil {
			h.Report(h.WrongType("delete", o.Obj))
		}
		h.Handler.OnDelete(deleted)
	default:
		h.Report(h.WrongType("delete", obj))
	}
}

// Measured is a client-go handler, as it is, that tells its Cursor what
// it is called with.
type Measured struct {
	cache.ResourceEventHandler
	Cursor Cursor
}

func (h *Measured) OnAdd(obj any, isInInitialList bool) {
	h.Cursor.Delivered(obj)
	h.ResourceEventHandler.OnAdd(obj, isInInitialList)
}

func (h *Measured) OnUpdate(oldObj, newObj any) {
	h.Cursor.Delivered(newObj)
	h.ResourceEventHandler.OnUpdate(oldObj, newObj)
}

func (h *Measured) OnDelete(obj any) {
	h.Cursor.Delivered(obj)
	h.ResourceEventHandler.OnDelete(obj)
}

// Shared returns shared as an Informer[T] hands it out: running it (Run,
// RunWithContext, as client-go users do) calls run instead, the
// Informer[T]'s Run, so that its State, and the factory that shares it,
// know it is running and when it stops; SetTransform calls setTransform,
// which sets the Informer[T]'s own transform, run in its ingest; handlers
// added the client-go way are Measured, each with a cursor of its own
// (newCursor).
func Shared(shared cache.SharedIndexInformer, run func(context.Context), setTransform func(cache.TransformFunc) error, newCursor func() Cursor) cache.SharedIndexInformer {
	return &sharedInformer{SharedIndexInformer: shared, run: run, setTransform: setTransform, newCursor: newCursor}
}

type sharedInformer struct {
	cache.SharedIndexInformer
	run          func(context.Context)
	setTransform func(cache.TransformFunc) error
	newCursor    func() Cursor
}

func (s *sharedInformer) Run(stopCh <-chan struct{}) { s.run(wait.ContextForChannel(stopCh)) }

func (s *sharedInformer) RunWithContext(ctx context.Context) { s.run(ctx) }

// SetTransform sets the Informer[T]'s transform (generic.WithTransform's);
// as in client-go, it fails once the informer has started.
func (s *sharedInformer) SetTransform(transform cache.TransformFunc) error {
	return s.setTransform(transform)
}

func (s *sharedInformer) AddEventHandler(handler cache.ResourceEventHandler) (cache.ResourceEventHandlerRegistration, error) {
	return s.SharedIndexInformer.AddEventHandler(s.measured(handler))
}

func (s *sharedInformer) AddEventHandlerWithResyncPeriod(handler cache.ResourceEventHandler, resyncPeriod time.Duration) (cache.ResourceEventHandlerRegistration, error) {
	return s.SharedIndexInformer.AddEventHandlerWithResyncPeriod(s.measured(handler), resyncPeriod)
}

func (s *sharedInformer) AddEventHandlerWithOptions(handler cache.ResourceEventHandler, options cache.HandlerOptions) (cache.ResourceEventHandlerRegistration, error) {
	return s.SharedIndexInformer.AddEventHandlerWithOptions(s.measured(handler), options)
}

func (s *sharedInformer) measured(handler cache.ResourceEventHandler) cache.ResourceEventHandler {
	if handler == nil {
		return nil // client-go refuses it
	}
	return &Measured{ResourceEventHandler: handler, Cursor: s.newCursor()}
}
