package controller

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	"github.com/generic-informers/generic/internal/writes"
)

// Reconciler brings the state of the object of key (of the primary type)
// to what it should be. It reads its objects from the controller's
// informers' Listers (the primary may be gone: its delete enqueues its key
// too) and writes through typed.Client with ctx, so that the next
// reconcile of key sees its writes. ctx ends when the controller stops.
//
// Return a zero Result and nil when done; an error to be retried with rate
// limiting; a Result to be reconciled again (see Result). The same key is
// never reconciled by two workers at once.
type Reconciler func(ctx context.Context, key cache.ObjectName) (Result, error)

// Result says when a key is reconciled again, besides when its objects
// change.
type Result struct {
	// RequeueAfter, if positive, reconciles the key again after this
	// long (replacing an earlier RequeueAfter of the key; its rate-limit
	// backoff is reset, but a retry scheduled already still happens).
	RequeueAfter time.Duration
	// Requeue, if true and RequeueAfter is zero, reconciles the key again
	// after the rate limiter's delay for it, as an error would, without
	// reporting one.
	//
	// It is deprecated, as controller-runtime's reconcile.Result.Requeue
	// is: the rate limiter's delay is for retrying failures, not for
	// waiting on a change. To wait for one, reconcile again after the time
	// it should take, or after a poll interval (RequeueAfter); to retry
	// with backoff, return an error. It keeps working as described.
	//
	// Deprecated: Use RequeueAfter instead.
	Requeue bool
}

// Controller runs a Reconciler over the keys of its primary objects; see
// the package documentation. Make one with New; it runs once (Run). Its
// methods are safe for concurrent use.
type Controller struct {
	name      string
	primary   Primary
	reconcile Reconciler
	opts      options
	writes    *writeLog

	mu      sync.Mutex
	started bool
	// synced is set once every handler has received its informer's
	// initial list.
	synced bool
	queue  workqueue.TypedRateLimitingInterface[cache.ObjectName]
	// keys holds what the controller holds of each key (keystate.go).
	keys map[cache.ObjectName]*keyState
	// delays counts consistency delays (WithQueueMetrics); made by Run.
	delays delayMetrics
	// delivered is what each source's handler has been told (idle.go),
	// set by Run.
	delivered []delivery
	// changes counts the adds of keys, the takes and ends of reconciles
	// and the writes recorded: Idle's report is of one moment when it did
	// not change while the report was made.
	changes atomic.Uint64
}

// New makes a Controller named name (the name of its workqueue in metrics
// and logs) that reconciles the keys of primary's objects with reconcile.
// It fails if name is empty, primary's informer or reconcile is nil, or an
// Option is invalid. Nothing runs until Run.
func New(name string, primary Primary, reconcile Reconciler, opts ...Option) (*Controller, error) {
	switch {
	case name == "":
		return nil, errors.New("controller: empty name")
	case primary.err != nil:
		return nil, primary.err
	case primary.register == nil:
		return nil, errors.New("controller: no primary; make one with For")
	case reconcile == nil:
		return nil, errors.New("controller: nil Reconciler")
	}
	o := defaultOptions()
	for _, opt := range opts {
		if opt == nil {
			continue
		}
		if err := opt(&o); err != nil {
			return nil, err
		}
	}
	c := &Controller{name: name, primary: primary, reconcile: reconcile, opts: o,
		keys: map[cache.ObjectName]*keyState{}}
	c.writes = newWriteLog(c.cachedUID, func() { c.changes.Add(1) })
	return c, nil
}

// Run runs the controller until ctx ends: it registers its handlers on its
// informers, waits until each handler has received its informer's initial
// list (the informers must be started, as by the factory's Start), starts
// the workers, and, when ctx ends, removes its handlers, shuts its queue
// down and returns once every reconcile in progress has returned, leaving
// no goroutine behind. It returns nil then; an error, at once, if it was
// run before or a handler could not be registered, or if ctx ended before
// the handlers received their initial lists (naming the informers that had
// not synced).
func (c *Controller) Run(ctx context.Context) error {
	queue, err := c.begin()
	if err != nil {
		return err
	}
	defer queue.ShutDown()
	registrations, err := c.register(queue)
	defer c.unregister(registrations)
	if err != nil {
		return err
	}
	c.mu.Lock()
	for _, r := range registrations {
		c.delivered = append(c.delivered, delivery{source: r.source, rv: r.told})
	}
	c.mu.Unlock()
	if err := c.waitForSync(ctx, registrations); err != nil {
		return err
	}
	for _, src := range c.sources() {
		if !src.judged {
			klog.FromContext(ctx).V(2).Info("The consistency wait on this informer covers updates and deletes of the objects it holds, not creates: its field selector names fields the wait cannot judge a write against",
				"controller", c.name, "gvr", src.gvr)
		}
	}
	c.mu.Lock()
	c.synced = true
	c.mu.Unlock()
	var workers sync.WaitGroup
	for range c.opts.workers {
		workers.Go(func() { c.work(ctx, queue) })
	}
	if c.member() {
		workers.Go(func() { c.followOwnership(ctx, queue) })
	}
	<-ctx.Done()
	queue.ShutDown()
	workers.Wait()
	c.stopTimers()
	return nil
}

// requeueAfter adds key after d, replacing an earlier RequeueAfter of it.
func (c *Controller) requeueAfter(queue workqueue.TypedRateLimitingInterface[cache.ObjectName], key cache.ObjectName, d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.state(key)
	if s.later != nil {
		s.later.Stop()
	}
	var t *time.Timer
	t = time.AfterFunc(d, func() {
		c.mu.Lock()
		s := c.state(key)
		if s.later == t {
			s.later = nil
		}
		s.cause = fmt.Sprintf("requeued after %v (Result.RequeueAfter)", d)
		c.mu.Unlock()
		c.add(queue, key)
	})
	s.later = t
}

func (c *Controller) stopTimers() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for key, s := range c.keys {
		if s.later != nil {
			s.later.Stop()
			s.later = nil
			c.release(key)
		}
	}
}

// begin makes the queue, once.
func (c *Controller) begin() (workqueue.TypedRateLimitingInterface[cache.ObjectName], error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.started {
		return nil, fmt.Errorf("controller %s: Run called twice", c.name)
	}
	c.started = true
	c.delays = newDelayMetrics(c.name, c.opts.metrics, c.sources())
	c.queue = workqueue.NewTypedRateLimitingQueueWithConfig(c.opts.rateLimiter,
		workqueue.TypedRateLimitingQueueConfig[cache.ObjectName]{Name: c.name, MetricsProvider: c.opts.metrics})
	return c.queue, nil
}

type registered struct {
	source       source
	registration cache.ResourceEventHandlerRegistration
	// told is how far its handler has been told (idle.go).
	told *toldUpTo
}

// cachedUID returns the UID the controller's caches of w's resource hold
// for w's object, or "".
func (c *Controller) cachedUID(w writes.Write) string {
	for _, src := range c.sources() {
		if src.gvr == w.Resource {
			if uid := src.uidOf(w); uid != "" {
				return uid
			}
		}
	}
	return ""
}

func (c *Controller) sources() []source {
	return append([]source{c.primary.source}, c.opts.sources...)
}

func (c *Controller) register(queue workqueue.TypedRateLimitingInterface[cache.ObjectName]) ([]registered, error) {
	var done []registered
	enqueue := c.enqueuer(queue)
	report := func(err error) { c.reportError(context.Background(), cache.ObjectName{}, err) }
	for _, src := range c.sources() {
		told := &toldUpTo{}
		registration, err := src.register(enqueue, report, told)
		if err != nil {
			return done, fmt.Errorf("controller %s: handler on %s: %w", c.name, src.gvr, err)
		}
		done = append(done, registered{source: src, registration: registration, told: told})
	}
	return done, nil
}

func (c *Controller) unregister(registrations []registered) {
	for _, r := range registrations {
		_ = r.source.informer.RemoveEventHandler(r.registration) // fails only on a stopped informer, which calls no handler
	}
}

// enqueuer adds a key, unless another replica's: one mapped from a
// secondary object on a sharded controller whose primary's cache does not
// hold it, or under a membership one whose primary the replica does not
// own (ownership.go).
func (c *Controller) enqueuer(queue workqueue.TypedRateLimitingInterface[cache.ObjectName]) enqueuer {
	return func(key cache.ObjectName, primary *event) {
		var obj runtime.Object
		if primary != nil {
			obj = primary.obj
		} else if c.primary.sharded() || c.member() {
			cached, ok := c.primary.cached(key)
			if !ok && c.primary.sharded() {
				return
			}
			obj = cached
		}
		if !owns(c.primary.ownership(), obj) {
			return
		}
		c.addPrimary(queue, key, obj)
	}
}

// add counts key's add and adds it, under c.mu, so that a worker that takes
// the key sees the count of every add the queue has merged into it.
func (c *Controller) add(queue workqueue.TypedRateLimitingInterface[cache.ObjectName], key cache.ObjectName) {
	c.addPrimary(queue, key, nil)
}

// addPrimary is add, and records obj (if not nil) as the last known state
// of key's primary, for the worker to tell whether the replica owns a key
// whose primary has left its cache (ownership.go).
func (c *Controller) addPrimary(queue workqueue.TypedRateLimitingInterface[cache.ObjectName], key cache.ObjectName, obj runtime.Object) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.state(key)
	s.added++
	c.changes.Add(1)
	if obj != nil && c.member() {
		s.lastKnown = obj
	}
	queue.Add(key)
}

func (c *Controller) waitForSync(ctx context.Context, registrations []registered) error {
	for _, r := range registrations {
		select {
		case <-r.registration.HasSyncedChecker().Done():
		case <-ctx.Done():
			return fmt.Errorf("controller %s: the handler on %s had not received its informer's objects when the context ended (is the factory started?): %w",
				c.name, r.source.gvr, ctx.Err())
		}
	}
	return nil
}

func (c *Controller) reportError(ctx context.Context, key cache.ObjectName, err error) {
	if c.opts.errorHandler != nil {
		c.opts.errorHandler(ctx, err)
		return
	}
	utilruntime.HandleErrorWithContext(ctx, err, "Reconcile failed", "controller", c.name, "key", key)
}

// reportDelay reports a key requeued because a cache has not caught up
// with its writes (a *ConsistencyDelayError).
func (c *Controller) reportDelay(ctx context.Context, key cache.ObjectName, err error) {
	if c.opts.errorHandler != nil {
		c.opts.errorHandler(ctx, err)
		return
	}
	utilruntime.HandleErrorWithContext(ctx, err, "Reconcile delayed: a cache has not caught up with the key's own writes", "controller", c.name, "key", key)
}

func (c *Controller) logger(ctx context.Context, key cache.ObjectName) klog.Logger {
	return klog.FromContext(ctx).WithValues("controller", c.name, "key", key)
}

// IgnoreNotFound returns nil if err is a NotFound error (apimachinery's
// apierrors.IsNotFound: a Lister's Get of an object that is gone), and err
// otherwise, as controller-runtime's client.IgnoreNotFound: a reconcile of
// a deleted primary returns controller.Result{}, IgnoreNotFound(err).
func IgnoreNotFound(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}
