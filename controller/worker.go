package controller

import (
	"context"
	"fmt"
	"runtime/debug"

	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

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
		adds := c.addsOf(key)
		c.process(ctx, queue, key)
		// Done first: a key added during the reconcile is back in the
		// queue before it leaves added, so that Idle never sees neither.
		queue.Done(key)
		c.reconciled(key, adds)
	}
}

func (c *Controller) addsOf(key cache.ObjectName) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.added[key]
}

// reconciled forgets key's adds, unless one came since the reconcile took
// it (the queue then holds it again).
func (c *Controller) reconciled(key cache.ObjectName, adds int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.added[key] == adds {
		delete(c.added, key)
	}
}

func (c *Controller) setRetrying(key cache.ObjectName, retrying bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if retrying {
		c.retrying[key] = true
	} else {
		delete(c.retrying, key)
	}
}

// process reconciles key once its caches have caught up with its writes,
// and requeues it as the result says.
func (c *Controller) process(ctx context.Context, queue workqueue.TypedRateLimitingInterface[cache.ObjectName], key cache.ObjectName) {
	ctx = klog.NewContext(ctx, c.logger(ctx, key))
	ctx, done, owned := c.beginReconcile(ctx, key)
	if !owned {
		c.setRetrying(key, false)
		queue.Forget(key)
		return
	}
	defer done()
	if err := c.catchUp(ctx, key); err != nil {
		if ctx.Err() != nil {
			return
		}
		c.setRetrying(key, true)
		c.reportError(ctx, key, err)
		queue.AddRateLimited(key)
		return
	}
	result, err := c.call(writes.WithRecorder(ctx, c.writes.recorderFor(key)), key)
	switch {
	case err != nil:
		c.setRetrying(key, true)
		c.reportError(ctx, key, err)
		queue.AddRateLimited(key)
	case result.RequeueAfter > 0:
		c.setRetrying(key, false)
		queue.Forget(key)
		c.requeueAfter(queue, key, result.RequeueAfter)
	case result.Requeue:
		c.setRetrying(key, true)
		queue.AddRateLimited(key)
	default:
		c.setRetrying(key, false)
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
// controller reads has caught up with the writes key's reconciles made,
// then forgets those writes.
func (c *Controller) catchUp(ctx context.Context, key cache.ObjectName) error {
	pending := c.writes.pending(key)
	if len(pending) == 0 {
		return nil
	}
	waitCtx, cancel := context.WithTimeout(ctx, c.opts.consistencyTimeout)
	defer cancel()
	for _, w := range pending {
		for _, src := range c.sources() {
			if src.gvr.GroupResource() != w.Resource.GroupResource() {
				continue
			}
			err := src.caughtUp(waitCtx, w)
			switch {
			case err == nil:
			case waitCtx.Err() != nil && c.timedOut(key) < maxConsistencyTimeouts:
				return fmt.Errorf("controller %s: key %s requeued: the cache of %s has not caught up with the write of %s/%s at resource version %q: %w",
					c.name, key, src.gvr, w.Namespace, w.Name, w.ResourceVersion, err)
			case waitCtx.Err() != nil:
				// A cache that has not caught up in several timeouts
				// may never (a field selector the wait cannot judge
				// against the write): reconcile rather than wedge.
				c.reportError(ctx, key, fmt.Errorf("controller %s: key %s reconciled after %d consistency timeouts, without the write of %s/%s at resource version %q in the cache of %s: %w",
					c.name, key, maxConsistencyTimeouts, w.Namespace, w.Name, w.ResourceVersion, src.gvr, err))
			default:
				// The wait cannot succeed (a resource version it cannot
				// order, a stopped informer, a write it cannot judge):
				// waiting again would wedge the key, so it is reported
				// and not waited for.
				c.reportError(ctx, key, fmt.Errorf("controller %s: key %s reconciled without waiting for the write of %s/%s to reach the cache of %s: %w",
					c.name, key, w.Namespace, w.Name, src.gvr, err))
			}
		}
	}
	c.writes.clear(key, pending)
	c.mu.Lock()
	delete(c.timeouts, key)
	c.mu.Unlock()
	return nil
}

// maxConsistencyTimeouts is how many consistency timeouts in a row a key
// is requeued for before it is reconciled anyway.
const maxConsistencyTimeouts = 3

// timedOut counts a consistency timeout of key and returns how many came
// before it in a row.
func (c *Controller) timedOut(key cache.ObjectName) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.timeouts[key]
	c.timeouts[key] = n + 1
	return n
}
