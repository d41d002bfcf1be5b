package generictest

import (
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// typedWatch converts the objects of a watch's events: to the typed
// clientset's Go types (Clientset), to metadata (metadataClient). Unlike
// watch.Filter, it stops sending once stopped, leaving no goroutine behind
// when its reader has gone.
type typedWatch struct {
	inner    watch.Interface
	convert  func(runtime.Object) (runtime.Object, error)
	out      chan watch.Event
	stopped  chan struct{}
	stopOnce sync.Once
}

func newTypedWatch(inner watch.Interface, convert func(runtime.Object) (runtime.Object, error)) *typedWatch {
	w := &typedWatch{inner: inner, convert: convert, out: make(chan watch.Event), stopped: make(chan struct{})}
	go w.loop()
	return w
}

func (w *typedWatch) ResultChan() <-chan watch.Event { return w.out }

func (w *typedWatch) Stop() {
	w.stopOnce.Do(func() {
		close(w.stopped)
		w.inner.Stop()
	})
}

func (w *typedWatch) loop() {
	defer close(w.out)
	for e := range w.inner.ResultChan() {
		if e.Object != nil {
			e = w.converted(e)
		}
		select {
		case w.out <- e:
		case <-w.stopped:
			return
		}
	}
}

// converted is e with its object converted, or an error event saying why
// it could not be.
func (w *typedWatch) converted(e watch.Event) watch.Event {
	obj, err := w.convert(e.Object)
	if err != nil {
		status := apierrors.NewInternalError(err).ErrStatus
		return watch.Event{Type: watch.Error, Object: &status}
	}
	e.Object = obj
	return e
}
