package generic

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"k8s.io/klog/v2"

	"github.com/generic-informers/generic/internal/membership"
	"github.com/generic-informers/generic/internal/shardsel"
)

// member is a replica's membership (WithMembership) and the factories it
// moves: the one place where internal/membership's Runner meets the
// informers. Its hooks move the factories' shared shard (Widen: the union,
// Narrow: the new shard alone) and wait for their caches, and set what the
// replica owns.
type member struct {
	config membership.Config
	leave  time.Duration
	// shard is the selection and ownership every factory of the
	// membership shares.
	shard  *shardState
	runner *membership.Runner

	mu sync.Mutex
	// factories are the factories started with the membership: their
	// informers run once it joined.
	factories []memberFactory
	started   bool
	stopped   bool
	// joined is set at the first Widen, which starts the informers under
	// informerCtx; joinedChan is closed once their caches hold the shard.
	joined     bool
	joinedChan chan struct{}
	// informerCtx is the informers' context: it ends once the runner has
	// returned (after a clean leave), not when Start's does.
	informerCtx context.Context
	cancel      context.CancelFunc
	done        chan struct{}
}

// memberFactory is what a member does with each Factory[T], whatever T.
type memberFactory interface {
	startInformers(ctx context.Context)
	waitForSelection(ctx context.Context, generation uint64) error
}

func newMember(m Membership) (*member, error) {
	config, leave, err := m.config()
	if err != nil {
		return nil, err
	}
	mem := &member{config: config, leave: leave, joinedChan: make(chan struct{}), done: make(chan struct{})}
	mem.shard = &shardState{state: shardsel.New(shardsel.Range{Index: 0, Count: 1}), owner: newMemberOwner()}
	mem.runner = membership.NewRunner(config, membership.Hooks{Widen: mem.widen, Narrow: mem.narrow, Own: mem.shard.owner.set})
	return mem, nil
}

// start joins the group with f, once: the first call runs the runner
// until ctx ends or stop, and gives provider (if it measures memberships)
// the membership's status. A factory started after the replica joined
// runs its informers at once, under the shard of the moment, and the
// steps that follow wait for its caches as for the others'.
func (m *member) start(ctx context.Context, f memberFactory, provider MetricsProvider) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.stopped {
		return
	}
	// Every factory started with the membership is one whose caches
	// widen and narrow wait for, whenever it starts: one started after
	// the replica joined too.
	if !slices.Contains(m.factories, f) {
		m.factories = append(m.factories, f)
	}
	if m.joined {
		f.startInformers(m.informerCtx)
		return
	}
	if m.started {
		return
	}
	m.started = true
	runCtx, cancel := context.WithCancel(ctx)
	informerCtx, stopInformers := context.WithCancel(context.WithoutCancel(ctx))
	m.informerCtx, m.cancel = informerCtx, cancel
	remove := func() {}
	if p, ok := provider.(MembershipMetricsProvider); ok {
		if r := p.NewMembershipMetrics(m.config.Group, m.config.Identity, m.status); r != nil {
			remove = r
		}
	}
	go func() {
		defer close(m.done)
		defer remove()
		defer stopInformers()
		if err := m.runner.Run(runCtx, m.leave); err != nil {
			klog.FromContext(ctx).Error(err, "Membership ended: the informers stop", "group", m.config.Group, "identity", m.config.Identity)
		}
	}()
}

// stop leaves the group, cleanly (see Membership.LeaveTimeout), and
// returns once the replica has left and its informers were told to stop.
func (m *member) stop() {
	m.mu.Lock()
	m.stopped = true
	started, cancel := m.started, m.cancel
	m.mu.Unlock()
	if started {
		cancel()
		<-m.done
	}
}

// waitToJoin waits until the replica joined and its informers hold its
// shard, or ctx ends.
func (m *member) waitToJoin(ctx context.Context) error {
	select {
	case <-m.joinedChan:
		return nil
	case <-m.done:
		return fmt.Errorf("generic: membership %s of group %q ended before it joined", m.config.Identity, m.config.Group)
	case <-ctx.Done():
		return fmt.Errorf("generic: membership %s of group %q has not joined: %w", m.config.Identity, m.config.Group, ctx.Err())
	}
}

// widen is the runner's Widen hook: the factories' informers select the
// union of what they select and next, and it returns once their caches
// hold it. At the first, they select next alone (they held nothing) and
// start.
func (m *member) widen(ctx context.Context, next shardsel.Range) error {
	m.mu.Lock()
	first := !m.joined
	var generation uint64
	if first {
		generation = m.shard.state.Narrow(next)
		m.joined = true
	} else {
		generation = m.shard.state.WidenAlso(next)
	}
	factories, informerCtx := slices.Clone(m.factories), m.informerCtx
	m.mu.Unlock()
	if first {
		for _, f := range factories {
			f.startInformers(informerCtx)
		}
	}
	if err := waitForSelections(ctx, factories, generation); err != nil {
		return err
	}
	if first {
		close(m.joinedChan)
	}
	return nil
}

// narrow is the runner's Narrow hook: the factories' informers select
// shard alone, and it returns once their caches hold it.
func (m *member) narrow(ctx context.Context, shard shardsel.Range) error {
	generation := m.shard.state.Narrow(shard)
	m.mu.Lock()
	factories := slices.Clone(m.factories)
	m.mu.Unlock()
	return waitForSelections(ctx, factories, generation)
}

func waitForSelections(ctx context.Context, factories []memberFactory, generation uint64) error {
	var errs []error
	for _, f := range factories {
		errs = append(errs, f.waitForSelection(ctx, generation))
	}
	return errors.Join(errs...)
}

// status is the membership's MembershipStatus: Membership's, and what a
// MembershipMetricsProvider reads. It is made from the runner's Status
// alone, whose announcement (Leaving, Phase) and Owns are the runner's
// state whatever changed it (a step, the leave, a step-down).
func (m *member) status() MembershipStatus {
	s := MembershipStatus{Group: m.config.Group, Identity: m.config.Identity}
	if m.runner == nil {
		return s
	}
	r := m.runner.Status()
	s.Members = slices.Clone([]string(r.View))
	if len(r.View) > 0 {
		s.Shard = shardOf(r.Shard)
	}
	s.Owned = r.Owned.String()
	s.Owns, s.Phase = r.Owns, string(r.Announced.Phase)
	s.Leaving, s.SteppedDown = r.Announced.Leaving, r.SteppedDown
	s.LastReshard, s.ReadError = r.LastReshard, r.ReadError
	return s
}
