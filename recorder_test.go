package generic_test

import (
	"context"
	"testing"
	"time"

	"k8s.io/client-go/tools/cache"

	"github.com/generic-informers/generic"
)

// event is what a handler saw, in a form cmp.Diff can compare.
type event struct {
	Verb string
	Key  string
	// Tombstone is set on deletes the informer did not see happen (the
	// object vanished between two lists).
	Tombstone bool
	// Last is a label of the object the handler got (see recorder.label),
	// on deletes its last known state.
	Last string
}

// recorder is a typed event handler that hands what it sees to the test.
type recorder[T generic.Object] struct {
	events chan event
	// label names the state of an object the test cares about.
	label func(T) string
}

func newRecorder[T generic.Object](label func(T) string) *recorder[T] {
	return &recorder[T]{events: make(chan event, 1000), label: label}
}

func (r *recorder[T]) OnAdd(obj T, _ bool) {
	r.events <- event{Verb: "ADDED", Key: keyOrEmpty(obj), Last: r.label(obj)}
}

func (r *recorder[T]) OnUpdate(_, obj T) {
	r.events <- event{Verb: "MODIFIED", Key: keyOrEmpty(obj), Last: r.label(obj)}
}

func (r *recorder[T]) OnDelete(deleted cache.DeletedObject[T]) {
	var zero T
	e := event{Verb: "DELETED", Key: deleted.GetKey(), Tombstone: deleted.FinalStateUnknown != nil}
	if deleted.OptionalObj != zero {
		e.Last = r.label(deleted.OptionalObj)
	}
	r.events <- e
}

// next returns the next n events, failing the test if they do not come
// before the test's deadline (or a minute, without one).
func (r *recorder[T]) next(t testing.TB, n int) []event {
	t.Helper()
	ctx, cancel := testContext(t)
	defer cancel()
	got := make([]event, 0, n)
	for len(got) < n {
		select {
		case e := <-r.events:
			got = append(got, e)
		case <-ctx.Done():
			t.Fatalf("got %d of %d events before the deadline: %+v", len(got), n, got)
		}
	}
	return got
}

func keyOrEmpty(obj any) string {
	key, _ := cache.MetaNamespaceKeyFunc(obj)
	return key
}

// testContext ends after a minute, or at the test's deadline (less a
// margin to report) if that comes first: one wait that fails must not use
// up the time of the tests after it.
func testContext(t testing.TB) (context.Context, context.CancelFunc) {
	deadline := time.Now().Add(time.Minute)
	if tt, ok := t.(*testing.T); ok {
		if testDeadline, ok := tt.Deadline(); ok && testDeadline.Add(-5*time.Second).Before(deadline) {
			deadline = testDeadline.Add(-5 * time.Second)
		}
	}
	return context.WithDeadline(context.Background(), deadline)
}

// errorSink collects what informers report through WithErrorHandler.
type errorSink chan error

func (s errorSink) handle(_ context.Context, err error) { s <- err }

// next returns the next reported error, failing at the test's deadline.
func (s errorSink) next(t testing.TB) error {
	t.Helper()
	ctx, cancel := testContext(t)
	defer cancel()
	select {
	case err := <-s:
		return err
	case <-ctx.Done():
		t.Fatal("no error reported before the deadline")
		return nil
	}
}
