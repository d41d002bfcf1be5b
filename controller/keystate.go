package controller

import (
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"
)

// keyState is what the controller holds of one key, under its mu: a
// record exists while any field is set (state makes it, release drops it
// once every field is back to its zero value), so that a key that is done
// costs nothing.
type keyState struct {
	// added counts the adds of the handlers since the key was last
	// reconciled with none in between: positive from its add until the
	// reconcile that follows returns.
	added int
	// retrying is set while the key's last reconcile failed or asked to
	// be requeued with rate limiting, until one succeeds.
	retrying bool
	// cause is why the key is still to do (the last reconcile's error, a
	// delay, a requeue), until one succeeds; for the idle report.
	cause string
	// later is the timer of a RequeueAfter: when it fires, the key is
	// added as the handlers add keys (counted in added).
	later *time.Timer
	// lastKnown is, under a membership, the primary's last state an event
	// brought while the key was queued (ownership.go).
	lastKnown runtime.Object
	// reconciling is, under a membership, the reconcile in progress: its
	// cancel and the state of its primary (ownership.go).
	reconciling *inProgress
	// active is what a worker that took the key does with it, for the
	// idle report (idle.go).
	active *activity
}

// done reports whether nothing is left of the key.
func (s *keyState) done() bool {
	return s.added == 0 && !s.retrying && s.cause == "" && s.later == nil &&
		s.lastKnown == nil && s.reconciling == nil && s.active == nil
}

// state returns key's record, made if it has none. c.mu must be held.
func (c *Controller) state(key cache.ObjectName) *keyState {
	s := c.keys[key]
	if s == nil {
		s = &keyState{}
		c.keys[key] = s
	}
	return s
}

// release drops key's record if nothing is left of it. c.mu must be held;
// every change that may clear a field of a record ends with it.
func (c *Controller) release(key cache.ObjectName) {
	if s := c.keys[key]; s != nil && s.done() {
		delete(c.keys, key)
	}
}
