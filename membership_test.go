package generic_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	coordinationclient "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/controller"
)

// member is one replica of a membership in the tests: a replica whose
// factory has WithMembership, and the shard selectors its informer listed
// with.
type member struct {
	*replica
	id string

	mu     sync.Mutex
	listed []string
}

// memberTimings are a loaded machine's, for tests: replicas renew and
// read every 20 ms, so that they move quickly, but a replica owns its
// shard for 10 s without a renewal, so that a live one does not step down
// when the machine is slow to run it (under -race with every core busy,
// goroutines wait hundreds of milliseconds; with a RenewDeadline of 300 ms
// a replica stepped down and owned nothing, and TestControllersFollowOwnership
// saw keys reconciled twice or by no one). No test here waits for a Lease
// to expire: replicas leave cleanly (the expiry is internal/membership's,
// on a fake clock, and e2e's).
func memberTimings(leases *fake.Clientset, id string) generic.Membership {
	return generic.Membership{Leases: leases.CoordinationV1().Leases("ns"), Group: "g", Identity: id,
		RetryPeriod: 20 * time.Millisecond, RenewDeadline: 10 * time.Second, LeaseDuration: 20 * time.Second, LeaveTimeout: 10 * time.Second}
}

func startMember(t *testing.T, ctx context.Context, server *shardServer, leases *fake.Clientset, id string) *member {
	t.Helper()
	m := newMember(t, server, leases, id)
	m.start(t, ctx)
	return m
}

// newMember makes a member, not started.
func newMember(t *testing.T, server *shardServer, leases *fake.Clientset, id string) *member {
	t.Helper()
	return newMemberOf(t, server, memberTimings(leases, id))
}

// newMemberOf makes a member of membership, with opts, not started.
func newMemberOf(t *testing.T, server *shardServer, membership generic.Membership, opts ...generic.InformerOption) *member {
	t.Helper()
	m := &member{id: membership.Identity}
	source := func(gvr schema.GroupVersionResource, namespace string, tweak generic.TweakListOptionsFunc) cache.ListerWatcher {
		return m.recording(server.Source(gvr, namespace, tweak))
	}
	m.replica = &replica{factory: newFactory[*corev1.ConfigMap](source, nil, append([]generic.FactoryOption{generic.WithMembership(mustMember(t, membership))}, asFactoryOptions(opts)...)...)}
	m.informer = acquire(m.factory, configMapsGVR)
	return m
}

// start starts m and waits until it joined.
func (m *member) start(t *testing.T, ctx context.Context) {
	t.Helper()
	m.factory.Start(ctx)
	t.Cleanup(m.factory.Shutdown)
	if err := m.factory.WaitForCacheSync(ctx).AsError(); err != nil {
		t.Fatal(err)
	}
}

// recording records the ShardSelector of each list and watch lw makes.
func (m *member) recording(lw cache.ListerWatcher) cache.ListerWatcher {
	record := func(o metav1.ListOptions) {
		m.mu.Lock()
		defer m.mu.Unlock()
		m.listed = append(m.listed, o.ShardSelector)
	}
	recorded := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			record(o)
			return lw.(cache.ListerWatcherWithContext).ListWithContext(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			record(o)
			return lw.(cache.ListerWatcherWithContext).WatchWithContext(ctx, o)
		},
	}
	if _, ok := lw.(listOnly); ok {
		return listOnly{recorded}
	}
	return recorded
}

func (m *member) selectors() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.listed)
}

// waitSettled waits until each of members is a member of the view of all
// of them, owns its whole shard, their caches partition the server's
// objects, and each object is owned by exactly one of them. Settled is a
// state the test waits for, not one that lasts: a member that misses its
// RenewDeadline owns nothing until it renews, by design (memberTimings
// make that unlikely, not impossible), so a check made later, once more,
// waits for it again.
func waitSettled(t *testing.T, ctx context.Context, server *shardServer, members ...*member) {
	t.Helper()
	var ids []string
	var replicas []*replica
	for _, m := range members {
		ids = append(ids, m.id)
		replicas = append(replicas, m.replica)
	}
	slices.Sort(ids)
	var last []string
	started := time.Now()
	defer func() { t.Logf("settled on %v in %v", ids, time.Since(started)) }()
	err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		last = nil
		for _, m := range members {
			status, _ := m.factory.Membership()
			if !slices.Equal(status.Members, ids) || !status.Owns || status.Phase != "Narrowed" {
				last = append(last, fmt.Sprintf("%s: %+v; informer %+v", m.id, status, m.informer.Status()))
			}
		}
		if last == nil {
			last = partitionProblems(replicas, server.names())
		}
		if last == nil {
			last = ownershipProblems(server, members)
		}
		return last == nil, nil
	})
	if err != nil {
		t.Fatalf("not settled on %v: %v", ids, last[:min(5, len(last))])
	}
}

// ownershipProblems names the server's objects not owned by exactly one of
// members.
func ownershipProblems(server *shardServer, members []*member) []string {
	var problems []string
	for name, owners := range ownersOf(server, members) {
		if len(owners) != 1 {
			problems = append(problems, fmt.Sprintf("%s is owned by %v, want one replica", name, owners))
		}
	}
	slices.Sort(problems)
	return problems
}

// ownersOf returns, for each of the server's objects, the members that own
// it.
func ownersOf(server *shardServer, members []*member) map[string][]string {
	owners := map[string][]string{}
	server.mu.Lock()
	defer server.mu.Unlock()
	for _, cm := range server.objects {
		owners[cm.Name] = nil
		for _, m := range members {
			if m.informer.Ownership().Owns(cm) {
				owners[cm.Name] = append(owners[cm.Name], m.id)
			}
		}
	}
	return owners
}

// TestMembershipScales scales replicas with a membership 1 -> 3 -> 2 (one
// leaves cleanly) -> 3 under churn, against servers with the gate on and
// off: at every sample, every object the churn does not touch is in some
// replica's cache and owned by at most one; once settled, the caches
// partition the objects and each object is owned by exactly one replica.
// A replica that joins lists with its shard's selector from its first
// request: it never lists every object.
func TestMembershipScales(t *testing.T) {
	for _, c := range serverKinds {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			server := newShardServer(c.honours, c.listOnly)
			server.create("stable", 300)
			stable := server.names()
			leases := fake.NewClientset()

			a := startMember(t, ctx, server, leases, "a")
			waitSettled(t, ctx, server, a)

			var mu sync.Mutex
			live := []*member{a}
			phase := "joining b, c"
			var problems []string
			var samples atomic.Int64
			stop := make(chan struct{})
			var background sync.WaitGroup
			background.Go(func() { churn(server, stop) })
			background.Go(func() {
				for {
					select {
					case <-stop:
						return
					case <-time.After(time.Millisecond):
					}
					mu.Lock()
					var replicas []*replica
					for _, m := range live {
						replicas = append(replicas, m.replica)
					}
					for _, name := range uncached(replicas, stable) {
						problems = append(problems, phase+": uncached: "+name)
					}
					for name, owners := range ownersOf(server, live) {
						if len(owners) > 1 {
							problems = append(problems, fmt.Sprintf("%s: %s owned by %v", phase, name, owners))
						}
					}
					mu.Unlock()
					samples.Add(1)
				}
			})
			// A replica is sampled from when it is made: once it starts,
			// the others may narrow as soon as it holds its shard.
			join := func(ids ...string) {
				for _, id := range ids {
					m := newMember(t, server, leases, id)
					mu.Lock()
					live = append(live, m)
					mu.Unlock()
					m.start(t, ctx)
				}
			}

			join("b", "c")
			waitSettled(t, ctx, server, live...)
			b := live[1]
			mu.Lock()
			phase = "b leaving"
			mu.Unlock()
			b.factory.Shutdown() // leaves cleanly
			mu.Lock()
			live = slices.DeleteFunc(live, func(m *member) bool { return m == b })
			mu.Unlock()
			waitSettled(t, ctx, server, live...)
			mu.Lock()
			phase = "joining d"
			mu.Unlock()
			join("d")
			waitSettled(t, ctx, server, live...)
			close(stop)
			background.Wait()

			if len(problems) > 0 {
				t.Errorf("%d problems in %d samples, first ones: %v", len(problems), samples.Load(), problems[:min(5, len(problems))])
			}
			for _, m := range live[1:] {
				if all := slices.Index(m.selectors(), ""); all >= 0 {
					t.Errorf("%s, which joined a group, made a request for every object (request %d of %v)", m.id, all, m.selectors())
				}
			}
			if got := strings.Count(fmt.Sprint(a.selectors()), "||"); got == 0 {
				t.Errorf("a never selected the union of two shards: %v", a.selectors())
			}
		})
	}
}

// TestMembershipOptionErrors: a Membership that cannot run is an error
// where the Option is given, and nothing is made.
func TestMembershipOptionErrors(t *testing.T) {
	leases := fake.NewClientset()
	valid := memberTimings(leases, "a")
	tests := []struct {
		name   string
		change func(*generic.Membership)
		opts   []generic.InformerOption
		want   string
	}{
		{"no Leases client", func(m *generic.Membership) { m.Leases = nil }, nil, "no Leases client"},
		{"no Group", func(m *generic.Membership) { m.Group = "" }, nil, "a Group and an Identity are needed"},
		{"Identity not a DNS subdomain", func(m *generic.Membership) { m.Identity = "Pod_1" }, nil, `Identity "Pod_1"`},
		{"Group not a label value", func(m *generic.Membership) { m.Group = "a/b" }, nil, `Group "a/b"`},
		{"timings out of order", func(m *generic.Membership) { m.RenewDeadline = m.LeaseDuration }, nil, "want 0 < RetryPeriod"},
		{"negative LeaveTimeout", func(m *generic.Membership) { m.LeaveTimeout = -time.Second }, nil, "negative LeaveTimeout"},
		{"with WithShard", func(*generic.Membership) {}, []generic.InformerOption{generic.WithShard(0, 2)}, "the membership gives the shard"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := valid
			tt.change(&m)
			err := func() error {
				member, err := generic.NewMember(m)
				if err != nil {
					return err
				}
				_, err = generic.NewFactory[*corev1.ConfigMap](nil, nil, append([]generic.FactoryOption{generic.WithMembership(member)}, asFactoryOptions(tt.opts)...)...)
				return err
			}()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("NewMember, NewFactory = %v, want an error saying %q", err, tt.want)
			}
		})
	}
	if _, err := generic.NewFactory[*corev1.ConfigMap](nil, nil, generic.WithMembership(nil)); err == nil || !strings.Contains(err.Error(), "WithMembership(nil)") {
		t.Errorf("NewFactory with WithMembership(nil) = %v, want an error naming it", err)
	}
	member := newFactory[*corev1.ConfigMap](nil, nil, generic.WithMembership(mustMember(t, valid)))
	if diff := cmp.Diff(generic.ErrMembershipReshards.Error(), fmt.Sprint(member.Reshard(context.Background(), generic.Shard{Index: 0, Count: 2}))); diff != "" {
		t.Errorf("Reshard of a membership's factory (-want +got):\n%s", diff)
	}
}

// mustMember is generic.NewMember of a valid m.
func mustMember(t *testing.T, m generic.Membership) *generic.Member {
	t.Helper()
	member, err := generic.NewMember(m)
	if err != nil {
		t.Fatal(err)
	}
	return member
}

// reconciles records the reconciles of controllers on several replicas:
// which replica reconciles each key now, the reconciles that overlapped
// one of another replica, and what each replica reconciled.
type reconciles struct {
	mu          sync.Mutex
	inProgress  map[string]string
	overlapping []string
	by          map[string]map[string]int
}

func (r *reconciles) reconcile(replica string) controller.Reconciler {
	return func(ctx context.Context, key cache.ObjectName) (controller.Result, error) {
		r.mu.Lock()
		if other, ok := r.inProgress[key.String()]; ok {
			r.overlapping = append(r.overlapping, fmt.Sprintf("%s by %s and %s", key, other, replica))
		}
		r.inProgress[key.String()] = replica
		if r.by[replica] == nil {
			r.by[replica] = map[string]int{}
		}
		r.by[replica][key.Name]++
		r.mu.Unlock()
		select { // long enough for an overlap to be seen
		case <-time.After(time.Millisecond):
		case <-ctx.Done():
		}
		r.mu.Lock()
		delete(r.inProgress, key.String())
		r.mu.Unlock()
		return controller.Result{}, nil
	}
}

// take returns what each replica reconciled since the last take.
func (r *reconciles) take() map[string]map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	by := r.by
	r.by = map[string]map[string]int{}
	return by
}

// TestControllersFollowOwnership runs a controller on each replica of a
// membership, scaled 1 -> 3 -> 2 (one leaves cleanly) under updates of
// every object: no key is reconciled by two replicas at once; once
// settled, an update of every object is reconciled by its owner alone;
// and the objects of the replica that left are reconciled by their new
// owners without any update, when they come to own them.
func TestControllersFollowOwnership(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	server := newShardServer(false, false)
	server.create("stable", 200)
	leases := fake.NewClientset()
	rec := &reconciles{inProgress: map[string]string{}, by: map[string]map[string]int{}}
	startController := func(m *member) {
		c, err := controller.New("test", controller.For(m.informer), rec.reconcile(m.id))
		if err != nil {
			t.Fatal(err)
		}
		runCtx, stop := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- c.Run(runCtx) }()
		t.Cleanup(func() {
			stop()
			if err := <-done; err != nil {
				t.Errorf("%s: Run: %v", m.id, err)
			}
		})
	}
	stop := make(chan struct{})
	var background sync.WaitGroup
	background.Go(func() { touch(server, stop) })

	a := startMember(t, ctx, server, leases, "a")
	startController(a)
	b := startMember(t, ctx, server, leases, "b")
	startController(b)
	c := startMember(t, ctx, server, leases, "c")
	startController(c)
	waitSettled(t, ctx, server, a, b, c)
	ownedByB := map[string]bool{}
	for name, owners := range ownersOf(server, []*member{b}) {
		if len(owners) == 1 {
			ownedByB[name] = true
		}
	}
	close(stop)
	background.Wait()
	rec.take()
	b.factory.Shutdown() // leaves cleanly
	waitSettled(t, ctx, server, a, c)
	// Every object b owned is reconciled by its new owner, with no update.
	var missed []string
	_ = wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		missed = nil
		owners := ownersOf(server, []*member{a, c})
		rec.mu.Lock()
		defer rec.mu.Unlock()
		for name := range ownedByB {
			if owner := owners[name]; len(owner) != 1 || rec.by[owner[0]][name] == 0 {
				missed = append(missed, name)
			}
		}
		return len(missed) == 0, nil
	})
	if len(missed) > 0 {
		t.Errorf("%d of the %d objects b owned were not reconciled by their new owner: %v", len(missed), len(ownedByB), missed[:min(5, len(missed))])
	}

	rec.take()
	server.mu.Lock()
	var all []*corev1.ConfigMap
	for _, cm := range server.objects {
		all = append(all, cm.DeepCopy())
	}
	server.mu.Unlock()
	for _, cm := range all {
		server.update(cm)
	}
	// Who owns an object is read at each poll: a member that misses its
	// RenewDeadline owns nothing until it renews (see waitSettled).
	var want, got map[string]map[string]int
	_ = wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		want = map[string]map[string]int{}
		for name, owners := range ownersOf(server, []*member{a, c}) {
			owner := fmt.Sprint(owners)
			if len(owners) == 1 {
				owner = owners[0]
			}
			if want[owner] == nil {
				want[owner] = map[string]int{}
			}
			want[owner][name] = 1
		}
		rec.mu.Lock()
		defer rec.mu.Unlock()
		got = rec.by
		return cmp.Equal(want, got), nil
	})
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("reconciles of one update of every object, by replica (-want +got):\n%s", diff)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.overlapping) > 0 {
		t.Errorf("%d reconciles overlapped one of another replica: %v", len(rec.overlapping), rec.overlapping[:min(5, len(rec.overlapping))])
	}
}

// touch updates the stable objects, one after another, until stop is
// closed.
func touch(server *shardServer, stop <-chan struct{}) {
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		case <-time.After(time.Millisecond):
		}
		server.mu.Lock()
		cm := server.objects[fmt.Sprintf("default/stable-%d", i%200)]
		server.mu.Unlock()
		if cm != nil {
			server.update(cm.DeepCopy())
		}
	}
}

// heldLeases is a Lease client whose Delete of the Lease held waits until
// release is closed. A replica that leaves cleanly deletes its Lease last:
// its leave is held there, its informers running, its runner not yet
// returned.
type heldLeases struct {
	coordinationclient.LeaseInterface
	held     string
	deleting chan struct{} // closed at the first Delete of held
	release  chan struct{}
	once     sync.Once
}

func (l *heldLeases) Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error {
	if name == l.held {
		l.once.Do(func() { close(l.deleting) })
		select {
		case <-l.release:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return l.LeaseInterface.Delete(ctx, name, opts)
}

// membershipMetrics is a MembershipMetricsProvider that keeps the status
// func it is given, as the Prometheus adapter does, until it is removed.
type membershipMetrics struct {
	mu      sync.Mutex
	status  func() generic.MembershipStatus
	removed bool
}

func (*membershipMetrics) NewInformerMetrics(generic.InformerID, generic.InformerGauges) generic.InformerMetrics {
	return nil
}

func (p *membershipMetrics) NewMembershipMetrics(_, _ string, status func() generic.MembershipStatus) func() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.status = status
	return func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.removed = true
	}
}

// read returns the status the provider reads at a scrape, false once it
// was removed (or before it was given one).
func (p *membershipMetrics) read() (generic.MembershipStatus, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.status == nil || p.removed {
		return generic.MembershipStatus{}, false
	}
	return p.status(), true
}

// leaveStatus is what a MembershipStatus says of a leave.
type leaveStatus struct {
	Members                    []string
	Shard                      generic.Shard
	Owned                      string
	Owns, Leaving, SteppedDown bool
}

func leaveStatusOf(s generic.MembershipStatus) leaveStatus {
	return leaveStatus{Members: s.Members, Shard: s.Shard, Owned: s.Owned, Owns: s.Owns, Leaving: s.Leaving, SteppedDown: s.SteppedDown}
}

// TestMembershipStatusWhileLeaving: of two settled replicas, b leaves
// cleanly, by Shutdown or by the end of its Start context. While it
// leaves (held before it deletes its Lease) and once it has left, its
// Membership says so: Leaving, owning nothing (not its shard: Owns is
// false), in a membership of a alone that gives it no shard; the status its
// MembershipMetricsProvider reads says the same while it leaves, and the
// provider's metrics are removed once it has left.
func TestMembershipStatusWhileLeaving(t *testing.T) {
	tests := []struct {
		name string
		// leave makes b leave, cancel ending its Start context, and
		// returns at once a func that waits until b has left.
		leave func(b *member, cancel context.CancelFunc) (wait func())
	}{
		{"Shutdown", func(b *member, _ context.CancelFunc) func() {
			done := make(chan struct{})
			go func() {
				defer close(done)
				b.factory.Shutdown()
			}()
			return func() { <-done }
		}},
		{"start context cancelled", func(b *member, cancel context.CancelFunc) func() {
			cancel()
			return b.factory.Shutdown
		}},
	}
	want := leaveStatus{Members: []string{"a"}, Owned: "none", Leaving: true}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			server := newShardServer(false, false)
			server.create("stable", 50)
			client := fake.NewClientset()
			leases := &heldLeases{LeaseInterface: client.CoordinationV1().Leases("ns"), held: "b", deleting: make(chan struct{}), release: make(chan struct{})}
			a := startMember(t, ctx, server, client, "a")
			membership := memberTimings(client, "b")
			membership.Leases = leases
			provider := &membershipMetrics{}
			b := newMemberOf(t, server, membership, generic.WithMetricsProvider(provider))
			bCtx, bCancel := context.WithCancel(ctx)
			defer bCancel()
			b.start(t, bCtx)
			waitSettled(t, ctx, server, a, b)

			left := tt.leave(b, bCancel)
			select {
			case <-leases.deleting:
			case <-ctx.Done():
				t.Fatal("b did not come to delete its Lease")
			}
			status, _ := b.factory.Membership()
			if diff := cmp.Diff(want, leaveStatusOf(status)); diff != "" {
				t.Errorf("b's Membership while it leaves (-want +got):\n%s", diff)
			}
			metrics, ok := provider.read()
			if !ok {
				t.Error("b's membership metrics were removed before it left")
			}
			if diff := cmp.Diff(want, leaveStatusOf(metrics)); diff != "" {
				t.Errorf("b's membership metrics while it leaves (-want +got):\n%s", diff)
			}

			close(leases.release)
			left()
			status, _ = b.factory.Membership()
			if diff := cmp.Diff(want, leaveStatusOf(status)); diff != "" {
				t.Errorf("b's Membership once it left (-want +got):\n%s", diff)
			}
			if _, ok := provider.read(); ok {
				t.Error("b's membership metrics are still there once it left")
			}
			waitSettled(t, ctx, server, a)
		})
	}
}
