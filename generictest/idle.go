package generictest

import (
	"context"
	"fmt"
	"reflect"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// Idler is a loop of the test's own that WaitIdle can wait on: Idle
// reports that it has nothing queued, in progress or waiting for a retry.
// A *controller.Controller needs none: WaitIdle knows it.
type Idler interface {
	Idle() bool
}

// WaitIdle returns once every change made so far, by the test or by the
// code under test through any of the Fake's clients, has reached the
// handlers of the Fake's informers (Settle), c is idle, and nothing was
// written meanwhile: a controller run on the Fake's informers has then
// reconciled everything there was to reconcile, its own writes' echoes
// included. c is a *controller.Controller (idle once it runs, its handlers
// have received their informers' initial lists, and no key is queued, in a
// worker or waiting to be retried after an error, a consistency delay or a
// Result with Requeue), or an Idler. Keys a controller scheduled for later
// (RequeueAfter) are not waited for. It fails the test if that does not
// happen within the Fake's Timeout, saying what was missing: for a
// controller, each key still to do, where it is (queued, waiting for its
// caches to catch up with its writes, in its Reconciler, waiting to be
// retried) and why (its last reconcile's error, the consistency delay, the
// requeue asked for).
func (f *Fake) WaitIdle(c any) {
	f.t.Helper()
	waitIdle, err := idlerOf(c)
	if err != nil {
		f.t.Fatal(err)
		return
	}
	ctx, cancel, bound := f.deadline()
	defer cancel()
	for {
		count := f.writes.count()
		f.Settle()
		if err := waitIdle(ctx); err != nil {
			f.t.Fatalf("generictest: the %s was not idle within %v: %v", kindOf(c), bound, err)
			return
		}
		if f.writes.count() == count {
			return
		}
	}
}

// controllerIdler is what WaitIdle waits on of a *controller.Controller:
// its own WaitIdle, whose error names each key still to do, where it is
// and why.
type controllerIdler interface {
	WaitIdle(ctx context.Context) error
}

// idlerOf returns how to wait until c is idle.
func idlerOf(c any) (func(context.Context) error, error) {
	if nilPointer(c) {
		return nil, fmt.Errorf("generictest: WaitIdle of a nil %T", c)
	}
	if w, ok := c.(controllerIdler); ok {
		return w.WaitIdle, nil
	}
	if i, ok := c.(Idler); ok {
		return func(ctx context.Context) error {
			err := wait.PollUntilContextCancel(ctx, time.Millisecond, true, func(context.Context) (bool, error) { return i.Idle(), nil })
			if err != nil {
				return fmt.Errorf("%T.Idle() is false: %w", i, err)
			}
			return nil
		}, nil
	}
	return nil, fmt.Errorf("generictest: WaitIdle of %T: want a *controller.Controller or an Idler", c)
}

// kindOf names what WaitIdle waits on.
func kindOf(c any) string {
	if _, ok := c.(Idler); ok {
		return fmt.Sprintf("Idler %T", c)
	}
	return "controller"
}

// nilPointer reports whether v holds a nil pointer, whose methods may
// panic.
func nilPointer(v any) bool {
	rv := reflect.ValueOf(v)
	return rv.Kind() == reflect.Pointer && rv.IsNil()
}
