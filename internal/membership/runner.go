package membership

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	coordinationclient "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/generic-informers/generic/internal/shardsel"
)

// Config is a replica's membership.
type Config struct {
	// Client reads and writes the Leases of Namespace.
	Client coordinationclient.LeaseInterface
	// Group names the controller whose replicas share shards: its Leases
	// carry it in GroupLabel.
	Group string
	// Identity is the replica's: its Lease's name, a DNS subdomain unique
	// in the group (a Pod's name).
	Identity string
	// LeaseDuration is how long the others wait, from the last change of a
	// replica's Lease they saw, before they take it for gone.
	// RenewDeadline is how long a replica keeps owning its shard without
	// renewing its Lease: shorter than LeaseDuration, so that it has
	// stepped down before any other can see its Lease expire (if their
	// clocks run at about the same rate). RetryPeriod is how often it
	// renews its Lease and reads the others'.
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
	// Clock is what the runner reads the time from and waits on: nil for
	// the real clock (tests give a fake one).
	Clock clock.WithDelayedExecution
}

// Validate returns an error for a Config the runner cannot run.
func (c Config) Validate() error {
	switch {
	case c.Client == nil:
		return errors.New("membership: no Lease client")
	case c.Group == "" || c.Identity == "":
		return errors.New("membership: a Group and an Identity are needed")
	case c.RetryPeriod <= 0 || c.RenewDeadline <= c.RetryPeriod || c.LeaseDuration <= c.RenewDeadline:
		return fmt.Errorf("membership: want 0 < RetryPeriod (%v) < RenewDeadline (%v) < LeaseDuration (%v)", c.RetryPeriod, c.RenewDeadline, c.LeaseDuration)
	}
	return nil
}

// Hooks are how a Runner moves the replica: its informers and what its
// controllers own. The runner calls each without holding its own lock: a
// hook may call Status. Widen and Narrow are called from Run's goroutine,
// one at a time; Own from it or the watchdog's, one at a time.
type Hooks struct {
	// Widen makes the informers cache the union of what they cache and
	// shard, and returns once their caches hold it.
	Widen func(ctx context.Context, shard shardsel.Range) error
	// Narrow makes them cache shard alone, and returns once they do.
	Narrow func(ctx context.Context, shard shardsel.Range) error
	// Own sets the hashes the replica's controllers own: none (Empty)
	// when it steps down or leaves.
	Own func(owned Interval)
}

// Status is what a replica's membership is, for its status and metrics.
// Announced and Owns are the replica's State, whichever path changed it (a
// step, a leave, the watchdog): while and after it leaves, Announced says
// Leaving, Owns is false and Owned is Empty.
type Status struct {
	// View is the membership it moves to; Shard its shard of it (zero
	// while it leaves: it is not in View).
	View  View
	Shard shardsel.Range
	// Announced is what its Lease says; Owns whether it owns its whole
	// shard.
	Announced Announcement
	Owns      bool
	// Owned is what it owns now.
	Owned Interval
	// LastReshard is when it last narrowed to a new view.
	LastReshard time.Time
	// SteppedDown is whether it owns nothing because it could not renew
	// its Lease.
	SteppedDown bool
	// ReadError is the error of its last read of the Leases, nil if it
	// succeeded: it takes no step until one does.
	ReadError error
}

// Runner runs a replica's membership: it holds its Lease, reads the
// others', and takes the protocol's steps (Next) with its Hooks.
//
// Three goroutines: the steps (Run's), which may wait long in a hook; the
// renewal of the Lease, every RetryPeriod; and a watchdog that steps the
// replica down when its Lease was not renewed for RenewDeadline, whatever
// the steps are waiting for.
type Runner struct {
	config Config
	hooks  Hooks
	leases *leases
	clock  clock.WithDelayedExecution

	// ownMu orders the changes of what the replica owns and their calls
	// of hooks.Own (see own); taken before mu, never held by Status.
	ownMu sync.Mutex
	// mu guards state, progress and lastRenew.
	mu sync.Mutex
	// state is the replica's own: the one place its announcement and
	// whether it owns its shard are kept, for the protocol and for
	// Status alike.
	state State
	// progress is the rest of what Status says.
	progress  progress
	lastRenew time.Time
}

// progress is what a Runner's Status says besides its State.
type progress struct {
	// owns is the State's Owns as the Own hook last heard it (see
	// publishOwnsLocked): Status says the replica owns its shard only
	// once the factory's Ownership says so too.
	owns        bool
	view        View
	shard       shardsel.Range
	owned       Interval
	lastReshard time.Time
	steppedDown bool
	readError   error
}

// NewRunner returns the Runner of config, which must be valid.
func NewRunner(config Config, hooks Hooks) *Runner {
	r := &Runner{config: config, hooks: hooks, clock: config.Clock}
	if r.clock == nil {
		r.clock = clock.RealClock{}
	}
	r.leases = &leases{client: config.Client, group: config.Group, identity: config.Identity, duration: config.LeaseDuration, now: r.clock.Now, seen: map[string]observation{}}
	r.progress.owned = Interval{Empty: true}
	return r
}

// Status returns the replica's membership now.
func (r *Runner) Status() Status {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.progress
	return Status{
		View: p.view, Shard: p.shard,
		Announced: r.state.Announced, Owns: p.owns,
		Owned: p.owned, LastReshard: p.lastReshard, SteppedDown: p.steppedDown, ReadError: p.readError,
	}
}

// Run joins the group and moves the replica with it until ctx ends; then
// it leaves cleanly: it owns nothing, says it is leaving, keeps its cache
// until the others have narrowed to the view without it (for at most
// leave: the others may be gone too), releases its Lease and returns.
// With leave 0 it returns without a word, as a replica that crashed: the
// others take its shard once its Lease expires, then delete its Lease. A
// hook's error ends it at once, without a leave.
//
// From the start of the leave on, and after Run returns, Status says
// Leaving, Owns false and Owned Empty.
func (r *Runner) Run(ctx context.Context, leave time.Duration) error {
	var background sync.WaitGroup
	defer background.Wait() // after cancelLeave, deferred below
	leaveCtx, cancelLeave := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelLeave()
	background.Go(func() { r.renewEvery(leaveCtx) })
	background.Go(func() { r.watch(leaveCtx) })

	if err := r.steps(ctx); err != nil || leave <= 0 {
		return err
	}
	r.own(func() (Interval, bool) {
		r.state.Announced.Leaving, r.state.Owns = true, false
		return Interval{Empty: true}, true
	})
	timeout, cancel := context.WithCancel(leaveCtx)
	defer cancel()
	timer := r.clock.AfterFunc(leave, cancel)
	defer timer.Stop()
	if err := r.steps(timeout); err != nil && !errors.Is(err, errReleased) {
		return err
	}
	cancelLeave() // stop renewing before the release
	background.Wait()
	return r.leases.release(context.WithoutCancel(ctx))
}

// errReleased ends the steps of a replica that has left.
var errReleased = errors.New("membership: released")

// steps reads the Leases and takes a step every RetryPeriod, and at once
// again after a step, until ctx ends (nil), a hook fails, or the replica
// may release its Lease (errReleased).
func (r *Runner) steps(ctx context.Context) error {
	for ctx.Err() == nil {
		moved, err := r.round(ctx)
		if err != nil && ctx.Err() == nil {
			return err // not a hook cut short by the end
		}
		if moved {
			continue
		}
		r.wait(ctx, r.retryPeriod())
	}
	return nil
}

// wait returns after d on the runner's clock, or once ctx ends.
func (r *Runner) wait(ctx context.Context, d time.Duration) {
	timer := r.clock.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
	case <-timer.C():
	}
}

// every calls f, then again period() after each call returns, until ctx
// ends.
func (r *Runner) every(ctx context.Context, period func() time.Duration, f func(context.Context)) {
	for ctx.Err() == nil {
		f(ctx)
		r.wait(ctx, period())
	}
}

// retryPeriod is RetryPeriod, jittered as client-go's leader election
// jitters it (up to 1.2 times).
func (r *Runner) retryPeriod() time.Duration { return wait.Jitter(r.config.RetryPeriod, 0.2) }

// round reads the others' Leases and takes one step; it reports whether
// the step moved the replica. A replica whose own Lease may have lapsed
// (the watchdog stepped it down) takes none. A replica that owns its whole
// shard of a view deletes the expired Leases it read (their replicas are
// not in the view: it and the others have taken their shards).
func (r *Runner) round(ctx context.Context) (bool, error) {
	others, expired, err := r.leases.others(ctx)
	r.mu.Lock()
	r.progress.readError = err
	if err != nil {
		// Cannot tell what the others say: try again at the next round.
		r.mu.Unlock()
		return false, nil //nolint:nilerr // kept in Status.ReadError
	}
	if !r.liveLocked() {
		r.mu.Unlock()
		return false, nil
	}
	state := r.state
	r.mu.Unlock()
	others = append(others, Member{Identity: r.config.Identity, Announcement: state.Announced})
	step := Next(r.config.Identity, others, state)
	r.mu.Lock()
	r.progress.view, r.progress.shard = step.View, step.Shard
	r.mu.Unlock()
	if len(expired) > 0 && state.Owns && state.Announced.View == step.View.Fingerprint() {
		r.deleteExpired(ctx, expired)
	}
	return r.take(ctx, step)
}

// deleteExpired deletes the expired Leases of replicas that are not in
// the view the replica owns its shard of, each only if it is still as the
// replica read it: one renewed since (Conflict) is live again, and one
// another survivor deleted first (NotFound) is gone; neither is an error.
func (r *Runner) deleteExpired(ctx context.Context, expired []expiredLease) {
	ctx, cancel := context.WithTimeout(ctx, r.config.RetryPeriod)
	defer cancel()
	logger := klog.FromContext(ctx)
	for _, e := range expired {
		switch err := r.leases.deleteExpired(ctx, e); {
		case err == nil:
			logger.V(4).Info("Deleted the expired Lease of a replica whose shard the group took over", "group", r.config.Group, "identity", r.config.Identity, "lease", e.name, "resourceVersion", e.resourceVersion)
		case apierrors.IsConflict(err) || apierrors.IsNotFound(err):
			logger.V(4).Info("Did not delete an expired Lease: renewed or deleted since it was read", "group", r.config.Group, "identity", r.config.Identity, "lease", e.name, "err", err)
		default:
			logger.V(2).Info("Could not delete an expired Lease; trying again at the next round", "group", r.config.Group, "identity", r.config.Identity, "lease", e.name, "err", err)
		}
	}
}

// take does step and reports whether it moved the replica: a step that
// announces writes the Lease at once.
func (r *Runner) take(ctx context.Context, step Step) (bool, error) {
	switch step.Action {
	case Widen:
		if err := r.hooks.Widen(ctx, step.Shard); err != nil {
			return false, err
		}
		r.mu.Lock()
		r.state = State{Announced: step.Announce}
	case Narrow:
		// Own less first: the objects that leave the cache reach its
		// handlers as deletes, which a controller must not take for
		// deletes of objects it still owns.
		r.own(func() (Interval, bool) {
			return r.progress.owned.Intersect(IntervalOf(step.Shard)), true
		})
		if err := r.hooks.Narrow(ctx, step.Shard); err != nil {
			return false, err
		}
		r.mu.Lock()
		r.state = State{Announced: step.Announce}
		r.progress.lastReshard = r.clock.Now()
	case Own:
		owned := r.own(func() (Interval, bool) {
			if !r.liveLocked() {
				return Interval{}, false
			}
			r.state.Owns = true
			return IntervalOf(step.Shard), true
		})
		if !owned {
			return false, nil
		}
		r.mu.Lock()
	case Release:
		return false, errReleased
	default:
		return false, nil
	}
	r.publishOwnsLocked()
	announced := r.state.Announced
	r.mu.Unlock()
	r.renew(ctx, announced)
	return true, nil
}

// renewEvery renews the replica's Lease every RetryPeriod until ctx ends.
func (r *Runner) renewEvery(ctx context.Context) {
	r.every(ctx, r.retryPeriod, func(ctx context.Context) {
		r.mu.Lock()
		announced := r.state.Announced
		r.mu.Unlock()
		r.renew(ctx, announced)
	})
}

// renew writes the replica's Lease, saying announced, within RetryPeriod.
func (r *Runner) renew(ctx context.Context, announced Announcement) {
	ctx, cancel := context.WithTimeout(ctx, r.config.RetryPeriod)
	defer cancel()
	started := r.clock.Now()
	if err := r.leases.renew(ctx, announced); err != nil {
		return
	}
	r.mu.Lock()
	// Counted from before the write: the others may see it change from
	// then on.
	r.lastRenew = started
	r.progress.steppedDown = false
	r.mu.Unlock()
}

// watch steps the replica down once its Lease was not renewed for
// RenewDeadline, checking twice every RetryPeriod, until ctx ends.
func (r *Runner) watch(ctx context.Context) {
	r.every(ctx, func() time.Duration { return r.config.RetryPeriod / 2 }, func(context.Context) {
		r.own(func() (Interval, bool) {
			if r.liveLocked() || r.progress.owned.Empty {
				return Interval{}, false
			}
			r.state.Owns = false
			r.progress.steppedDown = true
			return Interval{Empty: true}, true
		})
	})
}

// liveLocked reports whether the replica's own Lease was renewed within
// RenewDeadline.
func (r *Runner) liveLocked() bool {
	return !r.lastRenew.IsZero() && r.clock.Since(r.lastRenew) < r.config.RenewDeadline
}

// own sets what the replica owns to what decide returns, if it returns
// true, and tells the Own hook; it reports whether it did. decide runs
// under mu (it may read and change the state); the hook runs outside it,
// so that it may call Status. ownMu keeps the decisions and the hook calls
// in one order, whichever goroutine makes them (the steps, the watchdog).
func (r *Runner) own(decide func() (Interval, bool)) bool {
	r.ownMu.Lock()
	defer r.ownMu.Unlock()
	r.mu.Lock()
	owned, ok := decide()
	if ok {
		r.progress.owned = owned
	}
	if !r.state.Owns {
		r.publishOwnsLocked() // owning less is said at once
	}
	r.mu.Unlock()
	if ok {
		r.hooks.Own(owned)
		r.mu.Lock()
		r.publishOwnsLocked()
		r.mu.Unlock()
	}
	return ok
}

// publishOwnsLocked makes Status say what the State says of whether the
// replica owns its shard; r.mu is held. Owning less is said at once (own);
// owning the shard only once the Own hook has heard of it (own, and the
// end of each step, take): a Status that said Owns while the factory's
// Ownership still owned less would let a caller take the replica for
// settled too early (TestMembershipScales caught it, objects owned by no
// replica; TestStatusOwnsOnlyAfterOwnHook).
func (r *Runner) publishOwnsLocked() { r.progress.owns = r.state.Owns }
