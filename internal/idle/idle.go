// Package idle is how a controller tells the test kit whether it has
// anything left to do, and if so what and why, without a method code
// outside this module can call: package controller's *Controller has
// IdleReport(Key), whose Key only this module can name, and generictest's
// WaitIdle asks Of. It imports no other package of this module, and holds
// no state.
package idle

import (
	"fmt"
	"strings"
)

// Busy is one key a controller has still to do.
type Busy struct {
	// Key is the key, namespace/name.
	Key string
	// State is where the key is: queued, waiting for its caches to catch
	// up with its writes, in its Reconciler, or waiting to be retried.
	State string
	// Cause is why it is there, "" if unknown: the last reconcile's
	// error, the consistency delay (naming the informer and the write),
	// a Result that asked for a requeue.
	Cause string
}

// String is "key: state: cause".
func (b Busy) String() string {
	s := b.Key + ": " + b.State
	if b.Cause != "" {
		s += ": " + b.Cause
	}
	return s
}

// Report is what a controller has still to do at one moment.
type Report struct {
	// Idle is true when it has nothing to do.
	Idle bool
	// NotRunning, if not "", is why a controller that is not idle
	// cannot be: it is not running, has stopped, or its handlers have
	// not yet received their informers' initial lists.
	NotRunning string
	// Busy are the keys still to do, sorted by key.
	Busy []Busy
	// Queued is how many keys the queue holds, some of which may be in
	// Busy.
	Queued int
}

// maxNamed is how many busy keys String names.
const maxNamed = 10

// String says what is left: why the controller is not running, or the
// busy keys (at most maxNamed of them, and how many more).
func (r Report) String() string {
	switch {
	case r.Idle:
		return "idle"
	case r.NotRunning != "":
		return r.NotRunning
	case len(r.Busy) == 0:
		return fmt.Sprintf("%d keys queued", r.Queued)
	}
	parts := make([]string, 0, min(len(r.Busy), maxNamed)+1)
	for i, b := range r.Busy {
		if i == maxNamed {
			parts = append(parts, fmt.Sprintf("and %d more keys", len(r.Busy)-maxNamed))
			break
		}
		parts = append(parts, b.String())
	}
	return strings.Join(parts, "; ")
}

// Key is the argument of a Reporter's IdleReport: a type only this
// module can name (the package is internal), so that only its code can
// call the method.
type Key struct{}

// Reporter is what tells its Report: package controller's *Controller.
type Reporter interface {
	IdleReport(Key) Report
}

// Of returns the Report of v, and false if v is not a Reporter.
func Of(v any) (Report, bool) {
	r, ok := v.(Reporter)
	if !ok {
		return Report{}, false
	}
	return r.IdleReport(Key{}), true
}
