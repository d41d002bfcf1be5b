package controller

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/generic-informers/generic/internal/idle"
)

// IdleReport is for this module's test kit (generictest's WaitIdle), which
// asks through internal/idle: code outside the module cannot name its
// argument's type, and so cannot call it. It reports whether the
// controller is idle, and if not what it has still to do (idleReport).
func (c *Controller) IdleReport(idle.Key) idle.Report {
	if c == nil {
		return idle.Report{NotRunning: "a nil *controller.Controller"}
	}
	return c.idleReport()
}

// What a worker does with a key it took (activity.doing).
const (
	taken       = "taken by a worker"
	catchingUp  = "waiting for its caches to catch up with its writes"
	reconciling = "in its Reconciler"
)

// activity is what a worker does with a key, since when.
type activity struct {
	doing string
	since time.Time
}

// idleReport says whether the controller is idle: running, its handlers
// have received their informers' initial lists, and it has nothing to do:
// no key queued or in a worker, and none waiting to be retried after an
// error, a consistency delay or a Result with Requeue. Keys waiting for
// their RequeueAfter do not count. If it is not idle, the report names
// each key still to do, where it is and why.
func (c *Controller) idleReport() idle.Report {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case !c.started:
		return idle.Report{NotRunning: fmt.Sprintf("controller %s is not running (Run was not called)", c.name)}
	case c.queue.ShuttingDown():
		return idle.Report{NotRunning: fmt.Sprintf("controller %s has stopped (its Run returned or is returning)", c.name)}
	case !c.synced:
		return idle.Report{NotRunning: fmt.Sprintf("controller %s is starting: its handlers have not received their informers' initial lists", c.name)}
	}
	r := idle.Report{Queued: c.queue.Len()}
	now := time.Now()
	for key, s := range c.keys {
		if s.added == 0 && !s.retrying && s.active == nil {
			continue
		}
		b := idle.Busy{Key: key.String(), Cause: s.cause}
		switch {
		case s.active != nil:
			b.State = fmt.Sprintf("%s for %v", s.active.doing, now.Sub(s.active.since).Round(time.Millisecond))
		case s.added > 0:
			b.State = "queued"
		default:
			b.State = "waiting to be retried with the rate limiter's backoff"
		}
		r.Busy = append(r.Busy, b)
	}
	slices.SortFunc(r.Busy, func(a, b idle.Busy) int { return strings.Compare(a.Key, b.Key) })
	r.Idle = r.Queued == 0 && len(r.Busy) == 0
	return r
}

// delayCause is why a key was delayed (a *ConsistencyDelayError), without
// the controller's name and the key.
func delayCause(err error) string {
	if delay, ok := errors.AsType[*ConsistencyDelayError](err); ok {
		return delay.cause()
	}
	return "delayed: " + err.Error()
}

// firstLine is s up to its first line break (a panic's error holds its
// stack after it; the ErrorHandler is told the whole of it).
func firstLine(s string) string {
	if first, _, cut := strings.Cut(s, "\n"); cut {
		return first + " (…)"
	}
	return s
}
