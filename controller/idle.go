package controller

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/util/resourceversion"
	"k8s.io/apimachinery/pkg/util/wait"
)

// IdleReport is what a controller has still to do at one moment (Idle).
type IdleReport struct {
	// Idle is true when it has nothing to do: it runs, its handlers have
	// received their informers' initial lists and been told of every
	// change their informers have taken in, every write its reconciles
	// made is in its caches, and no key is queued, in a worker or waiting
	// to be retried (after an error, a consistency delay or a Result with
	// Requeue). Keys waiting for their RequeueAfter do not count.
	Idle bool
	// NotRunning, if not "", is why a controller that is not idle cannot
	// be: it is not running, has stopped, or its handlers have not yet
	// received their informers' initial lists.
	NotRunning string
	// Busy are the keys still to do, sorted by key.
	Busy []BusyKey
	// Queued is how many keys the queue holds, some of which may be in
	// Busy.
	Queued int
	// CatchingUp says, for each informer the controller watches that has
	// taken in changes its handlers have not been told of yet, or that
	// has not taken in a write of the controller's own yet, how far
	// behind it is, sorted.
	CatchingUp []string
}

// BusyKey is one key a controller has still to do.
type BusyKey struct {
	// Key is the key, "namespace/name".
	Key string
	// State is where the key is: queued, waiting for its caches to catch
	// up with its writes, in its Reconciler (and for how long), or
	// waiting to be retried.
	State string
	// Cause is why it is there, "" if unknown: the last reconcile's
	// error, the consistency delay (naming the informer and the write), a
	// Result that asked for a requeue.
	Cause string
}

// String is "key: state: cause".
func (b BusyKey) String() string {
	s := b.Key + ": " + b.State
	if b.Cause != "" {
		s += ": " + b.Cause
	}
	return s
}

// maxNamed is how many busy keys an IdleReport's String names.
const maxNamed = 10

// String says what is left: why the controller is not running, or what
// its informers have still to bring its handlers and the busy keys (at
// most maxNamed of them, and how many more); "idle" if nothing.
func (r IdleReport) String() string {
	switch {
	case r.Idle:
		return "idle"
	case r.NotRunning != "":
		return r.NotRunning
	}
	parts := slices.Clone(r.CatchingUp)
	for i, b := range r.Busy {
		if i == maxNamed {
			parts = append(parts, fmt.Sprintf("and %d more keys", len(r.Busy)-maxNamed))
			break
		}
		parts = append(parts, b.String())
	}
	if len(r.Busy) == 0 && r.Queued > 0 {
		parts = append(parts, fmt.Sprintf("%d keys queued", r.Queued))
	}
	return strings.Join(parts, "; ")
}

// Idle reports what the controller has still to do now; it changes
// nothing. It is for tests and diagnostics: a test waits with WaitIdle.
func (c *Controller) Idle() IdleReport {
	if c == nil {
		return IdleReport{NotRunning: "a nil *controller.Controller"}
	}
	// Its informers first: what they have taken in and told its handlers
	// is then in the queue when the keys are read. The report is of one
	// moment only if nothing changed while it was made (changes counts
	// every add, take, end of a reconcile and write): else it is read
	// again.
	for {
		before := c.changes.Load()
		catchingUp := c.catchingUp()
		r := c.keysReport()
		r.CatchingUp = catchingUp
		r.Idle = r.NotRunning == "" && r.Queued == 0 && len(r.Busy) == 0 && len(catchingUp) == 0
		if !r.Idle || c.changes.Load() == before {
			return r
		}
	}
}

// NotIdleError is WaitIdle's error when its context ends first: the last
// IdleReport, and the context's error, which it wraps.
type NotIdleError struct {
	Controller string
	Report     IdleReport
	Err        error
}

// Error is "controller name: report (ctx's error)".
func (e *NotIdleError) Error() string {
	return fmt.Sprintf("controller %s: %s (%v)", e.Controller, e.Report, e.Err)
}

func (e *NotIdleError) Unwrap() error { return e.Err }

// Polling intervals of WaitIdle: the first check after the one made at
// once, and the most the interval grows to.
const (
	firstIdlePoll = 100 * time.Microsecond
	maxIdlePoll   = 10 * time.Millisecond
)

// WaitIdle returns nil once the controller is idle (see IdleReport.Idle),
// on any backend (a real API server, envtest, a kind cluster, generictest's
// Fake), or a *NotIdleError with what it was still busy with when ctx
// ended: each key still to do, where it is and why, and each informer
// whose changes have not all reached its handlers. It polls Idle, at once
// and then at intervals that grow from 100 µs to 10 ms.
//
// Idle means the controller has done everything that its informers had
// taken in, its own writes included (their echoes reached its handlers,
// which enqueued what they map to, and those keys were reconciled). A
// change made by someone else (the test itself) that its informers have
// not received yet is not waited for: wait for it first (the informer's
// WaitForWrite), then WaitIdle. Two corners are not waited for: a
// relist's notifications (a watch that expired) come in the list's order,
// so the controller may look idle while the last of them are on their
// way; and a key scheduled with RequeueAfter.
func (c *Controller) WaitIdle(ctx context.Context) error {
	if c == nil {
		return errors.New("controller: WaitIdle of a nil *controller.Controller")
	}
	var last IdleReport
	backoff := wait.Backoff{Duration: firstIdlePoll, Factor: 1.5, Steps: 1 << 30, Cap: maxIdlePoll}
	for {
		if last = c.Idle(); last.Idle {
			return nil
		}
		timer := time.NewTimer(backoff.Step())
		select {
		case <-ctx.Done():
			timer.Stop()
			return &NotIdleError{Controller: c.name, Report: c.Idle(), Err: ctx.Err()}
		case <-timer.C:
		}
	}
}

// catchingUp says, for each of the controller's sources, whether its
// handler has been told of every change its informer handed on, and
// whether its informers have taken in each write the controller's
// reconciles made that no reconcile has seen yet.
//
// The order matters: a write a cache holds was handed on before it was
// applied, so an informer's newest resourceVersion handed on, read after
// the writes were found in the caches, covers them; and a handler told of
// that resourceVersion, read after it, has enqueued what they map to
// before keysReport reads the queue.
func (c *Controller) catchingUp() []string {
	behind := c.unseenWrites()
	c.mu.Lock()
	delivered := slices.Clone(c.delivered)
	c.mu.Unlock()
	for _, d := range delivered {
		handedOn := d.source.status().LastEventResourceVersion
		if told := d.rv.get(); handedOn != "" && !atOrAfter(told, handedOn) {
			behind = append(behind, fmt.Sprintf("its handler on %s has been told of changes up to resource version %q, its informer has taken in %q", d.source.gvr, told, handedOn))
		}
	}
	return behind
}

// unseenWrites names the writes the controller's reconciles made that an
// informer it watches of their resource has not taken in yet.
func (c *Controller) unseenWrites() []string {
	done, cancel := context.WithCancel(context.Background())
	cancel() // caughtUp then looks once, and does not wait
	var unseen []string
	for key, pending := range c.writes.all() {
		for _, w := range pending {
			for _, src := range c.sources() {
				if src.gvr.GroupResource() != w.Resource.GroupResource() {
					continue
				}
				if err := src.caughtUp(done, w); err != nil && !errors.Is(err, context.Canceled) {
					continue // an informer that stopped, or cannot tell: no event to wait for
				} else if err != nil {
					unseen = append(unseen, fmt.Sprintf("the informer of %s has not taken in the write of %s/%s (resource version %q) of key %s", src.gvr, w.Namespace, w.Name, w.ResourceVersion, key))
				}
			}
		}
	}
	slices.Sort(unseen)
	return unseen
}

// atOrAfter reports whether resource version rv is want or later; one that
// cannot be ordered is not.
func atOrAfter(rv, want string) bool {
	if rv == "" {
		return false
	}
	order, err := resourceversion.CompareResourceVersion(rv, want)
	return err == nil && order >= 0
}

// toldUpTo is the newest resource version of the objects a handler of the
// controller has been called with: once it has finished with them, so that
// the keys they map to are queued.
type toldUpTo struct {
	mu sync.Mutex
	rv string
}

func (t *toldUpTo) told(rv string) {
	if rv == "" {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.rv == "" {
		t.rv = rv
		return
	}
	if order, err := resourceversion.CompareResourceVersion(rv, t.rv); err == nil && order > 0 {
		t.rv = rv
	}
}

func (t *toldUpTo) get() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.rv
}

// delivery is what a source's handler of the controller has been told.
type delivery struct {
	source source
	rv     *toldUpTo
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

// keysReport says whether the controller runs, its handlers have received
// their informers' initial lists, and what it has still to do: the keys
// queued or in a worker, and those waiting to be retried after an error, a
// consistency delay or a Result with Requeue. Keys waiting for their
// RequeueAfter do not count. It names each key still to do, where it is
// and why.
func (c *Controller) keysReport() IdleReport {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case !c.started:
		return IdleReport{NotRunning: fmt.Sprintf("controller %s is not running (Run was not called)", c.name)}
	case c.queue.ShuttingDown():
		return IdleReport{NotRunning: fmt.Sprintf("controller %s has stopped (its Run returned or is returning)", c.name)}
	case !c.synced:
		return IdleReport{NotRunning: fmt.Sprintf("controller %s is starting: its handlers have not received their informers' initial lists", c.name)}
	}
	r := IdleReport{Queued: c.queue.Len()}
	now := time.Now()
	for key, s := range c.keys {
		if s.added == 0 && !s.retrying && s.active == nil {
			continue
		}
		b := BusyKey{Key: key.String(), Cause: s.cause}
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
	slices.SortFunc(r.Busy, func(a, b BusyKey) int { return strings.Compare(a.Key, b.Key) })
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
