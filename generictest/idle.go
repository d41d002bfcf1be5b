package generictest

import (
	"context"
	"fmt"
	"reflect"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/generic-informers/generic/internal/idle"
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
	report, err := idlerOf(c)
	if err != nil {
		f.t.Fatal(err)
		return
	}
	ctx, cancel, bound := f.deadline()
	defer cancel()
	for {
		count := f.writes.count()
		f.Settle()
		var last idle.Report
		err := wait.PollUntilContextCancel(ctx, time.Millisecond, true, func(context.Context) (bool, error) {
			last = report()
			return last.Idle, nil
		})
		if err != nil {
			f.t.Fatalf("generictest: the %s was not idle within %v: %s", kindOf(c), bound, last)
			return
		}
		if f.writes.count() == count {
			return
		}
	}
}

// idlerOf returns how to ask c whether it is idle, and what it is busy
// with.
func idlerOf(c any) (func() idle.Report, error) {
	if nilPointer(c) {
		return nil, fmt.Errorf("generictest: WaitIdle of a nil %T", c)
	}
	if _, ok := idle.Of(c); ok {
		return func() idle.Report {
			r, _ := idle.Of(c)
			return r
		}, nil
	}
	if i, ok := c.(Idler); ok {
		return func() idle.Report {
			if i.Idle() {
				return idle.Report{Idle: true}
			}
			return idle.Report{NotRunning: fmt.Sprintf("%T.Idle() is false", i)}
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
