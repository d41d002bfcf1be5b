package controller

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/internal/writes"
)

// work reconciles keys until the queue shuts down or ctx ends.
func (c *Controller) work(ctx context.Context, queue workqueue.TypedRateLimitingInterface[cache.ObjectName]) {
	for {
		key, shutdown := queue.Get()
		if shutdown {
			return
		}
		if ctx.Err() != nil {
			queue.Done(key)
			return
		}
		adds := c.take(key)
		c.process(ctx, queue, key)
		// Reconciled first, then Done: until Done, no other worker can
		// take the key, so the record this worker clears is its own. (Done
		// first let another worker take a key added during the reconcile,
		// and this worker then cleared that worker's activity and adds:
		// the idle report saw a key in its Reconciler as done,
		// TestWaitIdleWaitsForItsOwnWritesEchoes with four workers.) An
		// add that comes during the reconcile or before Done stays counted
		// in added, so the report never sees neither.
		c.reconciled(key, adds)
		queue.Done(key)
	}
}

// take records that a worker took key, and returns its adds so far.
func (c *Controller) take(key cache.ObjectName) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.state(key)
	s.active = &activity{doing: taken, since: time.Now()}
	c.changes.Add(1)
	return s.added
}

// doing records what the worker that took key does with it now.
func (c *Controller) doing(key cache.ObjectName, doing string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.state(key).active = &activity{doing: doing, since: time.Now()}
}

// reconciled forgets key's adds, unless one came since the reconcile took
// it (the queue then holds it again), and that a worker has it.
func (c *Controller) reconciled(key cache.ObjectName, adds int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.state(key)
	if s.added == adds {
		s.added = 0
	}
	s.active = nil
	c.changes.Add(1)
	c.release(key)
}

// setRetrying records whether key waits to be retried with backoff, and
// why (cause: "" when it does not, and its cause is forgotten).
func (c *Controller) setRetrying(key cache.ObjectName, retrying bool, cause string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.state(key)
	s.retrying = retrying
	s.cause = ""
	if retrying {
		s.cause = cause
	}
	c.release(key)
}

// process reconciles key once its caches have caught up with its writes,
// and requeues it as the result says.
func (c *Controller) process(ctx context.Context, queue workqueue.TypedRateLimitingInterface[cache.ObjectName], key cache.ObjectName) {
	ctx = klog.NewContext(ctx, c.logger(ctx, key))
	ctx, done, owned := c.beginReconcile(ctx, key)
	if !owned {
		c.setRetrying(key, false, "")
		queue.Forget(key)
		return
	}
	defer done()
	if err := c.catchUp(ctx, key); err != nil {
		if ctx.Err() != nil {
			return
		}
		// Delayed, never reconciled on a cache older than the key's own
		// last write: retried with backoff, its writes still pending.
		c.setRetrying(key, true, delayCause(err))
		c.reportDelay(ctx, key, err)
		queue.AddRateLimited(key)
		return
	}
	c.doing(key, reconciling)
	result, err := c.call(writes.WithRecorder(ctx, c.writes.recorderFor(key)), key)
	switch {
	case err != nil:
		c.setRetrying(key, true, "its last reconcile failed: "+firstLine(err.Error()))
		c.reportError(ctx, key, err)
		queue.AddRateLimited(key)
	case result.RequeueAfter > 0:
		c.setRetrying(key, false, "")
		queue.Forget(key)
		c.requeueAfter(queue, key, result.RequeueAfter)
	case result.Requeue:
		c.setRetrying(key, true, "its last reconcile returned Result.Requeue")
		queue.AddRateLimited(key)
	default:
		c.setRetrying(key, false, "")
		queue.Forget(key)
	}
}

// call runs the Reconciler, turning a panic into an error.
func (c *Controller) call(ctx context.Context, key cache.ObjectName) (result Result, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("controller %s: reconcile of %s panicked: %v\n%s", c.name, key, r, debug.Stack())
		}
	}()
	return c.reconcile(ctx, key)
}

// catchUp waits, at most the consistency timeout, until every informer the
// controller watches of the resource of each write key's reconciles made
// has caught up with it, and forgets each write once all have, or once
// it is known that one never will show it (catchUp's nil) or has stopped
// (reported). It returns a *ConsistencyDelayError, counted, for the first
// write an informer has not caught up with (that write and those after it
// stay pending), or ctx's error if ctx ended.
func (c *Controller) catchUp(ctx context.Context, key cache.ObjectName) error {
	pending := c.writes.pending(key)
	if len(pending) == 0 {
		return nil
	}
	c.doing(key, catchingUp)
	waitCtx, cancel := context.WithTimeout(ctx, c.opts.consistencyTimeout)
	defer cancel()
	var settled []writes.Write
	defer func() { c.writes.clear(key, settled) }()
	for _, w := range pending {
		for _, src := range c.sources() {
			if src.gvr.GroupResource() != w.Resource.GroupResource() {
				continue
			}
			err := src.caughtUp(waitCtx, w)
			switch {
			case err == nil:
			case ctx.Err() != nil:
				return ctx.Err()
			case errors.Is(err, generic.ErrInformerStopped):
				// Its cache will not change any more: the write is
				// unobservable there.
				c.reportError(ctx, key, fmt.Errorf("controller %s: key %s: the write of %s/%s (resource version %q) is not waited for: the informer of %s stopped first: %w",
					c.name, key, w.Namespace, w.Name, w.ResourceVersion, src.gvr, err))
			default:
				c.delays.delayed(src.gvr)
				return &ConsistencyDelayError{Controller: c.name, Key: key, Resource: src.gvr,
					Namespace: w.Namespace, Name: w.Name, ResourceVersion: w.ResourceVersion, Deleted: w.Deleted, Err: err}
			}
		}
		settled = append(settled, w)
	}
	return nil
}
