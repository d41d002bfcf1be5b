package controller

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/generic-informers/generic"
)

// A controller whose primary informer's factory has a membership
// (generic.WithMembership) reconciles only the keys whose primary the
// replica owns (generic.Informer.Ownership), so that two live replicas do
// not reconcile one object at once:
//
//   - an event enqueues a key only if the replica owns its primary (the
//     event's object, or for a key mapped from a secondary object, the
//     primary's cached state);
//   - a worker drops a key it does not own when it takes it (its primary's
//     cached state, or if the cache no longer holds it, the last state an
//     event brought: an object that left the replica's shard reaches the
//     handlers as a delete, after the replica stopped owning it);
//   - when what the replica owns changes, the keys of the cached primaries
//     it owns now and did not own before are enqueued, and the context of
//     each reconcile in progress whose key it no longer owns is cancelled.
//
// A delete whose last state is unknown, and a mapped key whose primary is
// not cached on a replica that holds every object, are owned.

// inProgress is a reconcile under way: its context's cancel, and its
// primary's state.
type inProgress struct {
	cancel context.CancelFunc
	obj    runtime.Object
}

// member reports whether the primary's factory has a membership.
func (c *Controller) member() bool { return c.primary.member }

// owns reports whether ownership holds the key whose primary is obj (nil:
// unknown, owned).
func owns(ownership generic.Ownership, obj runtime.Object) bool {
	return obj == nil || ownership.Owns(obj)
}

// beginReconcile is the worker's check before it reconciles key: it
// returns the reconcile's context, a func to call when the reconcile has
// returned, and false if the replica does not own key (the worker drops
// the key then).
func (c *Controller) beginReconcile(ctx context.Context, key cache.ObjectName) (context.Context, func(), bool) {
	if !c.member() {
		return ctx, func() {}, true
	}
	obj, cached := c.primary.cached(key)
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.state(key)
	if !cached {
		obj = s.lastKnown
	}
	s.lastKnown = nil
	ownership := c.primary.ownership()
	if !owns(ownership, obj) {
		c.release(key)
		return nil, nil, false
	}
	// Read and recorded under c.mu, as cancelNotOwned reads the record:
	// a change of ownership after the read finds this reconcile.
	reconcileCtx, cancel := context.WithCancel(ctx)
	s.reconciling = &inProgress{cancel: cancel, obj: obj}
	return reconcileCtx, func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.state(key).reconciling = nil
		c.release(key)
		cancel()
	}, true
}

// followOwnership, until ctx ends, enqueues the cached primaries the
// replica comes to own, and cancels the reconciles of keys it no longer
// owns.
func (c *Controller) followOwnership(ctx context.Context, queue workqueue.TypedRateLimitingInterface[cache.ObjectName]) {
	before := c.primary.ownership()
	for {
		select {
		case <-before.Changed:
		case <-ctx.Done():
			return
		}
		now := c.primary.ownership()
		c.cancelNotOwned(now)
		for _, obj := range c.primary.all() {
			if now.Owns(obj) && !before.Owns(obj) {
				if key, err := cache.ObjectToName(obj); err == nil {
					c.addPrimary(queue, key, obj)
				}
			}
		}
		before = now
	}
}

// cancelNotOwned cancels the reconciles of keys ownership does not hold.
func (c *Controller) cancelNotOwned(ownership generic.Ownership) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range c.keys {
		if r := s.reconciling; r != nil && !owns(ownership, r.obj) {
			r.cancel()
		}
	}
}
