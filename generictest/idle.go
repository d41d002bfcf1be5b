package generictest

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// Idler is what WaitIdle waits on; *controller.Controller is one (its Idle
// reports no key queued, being reconciled or waiting for a retry).
type Idler interface {
	Idle() bool
}

// WaitIdle returns once every change made so far, by the test or by the
// code under test through any of the Fake's clients, has reached the
// handlers of the Fake's informers (Settle), c is idle, and nothing was
// written meanwhile: a controller run on the Fake's informers has then
// reconciled everything there was to reconcile, its own writes' echoes
// included. Keys a controller scheduled for later (RequeueAfter) are not
// waited for. It fails the test if that does not happen within the Fake's
// Timeout, saying what was missing.
func (f *Fake) WaitIdle(c Idler) {
	f.t.Helper()
	ctx, cancel, bound := f.deadline()
	defer cancel()
	for {
		count := f.writes.count()
		f.Settle()
		err := wait.PollUntilContextCancel(ctx, time.Millisecond, true, func(context.Context) (bool, error) {
			return c.Idle(), nil
		})
		if err != nil {
			f.t.Fatalf("generictest: the controller was not idle within %v: a key keeps failing or being requeued", bound)
			return
		}
		if f.writes.count() == count {
			return
		}
	}
}
