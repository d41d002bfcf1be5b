package membership

import (
	"context"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	testingclock "k8s.io/utils/clock/testing"
)

// leaseServer makes a fake clientset's Leases behave as the API server's
// where the runners rely on it: every write gives the Lease a new
// resourceVersion; an update of another resourceVersion, and a delete
// whose resourceVersion precondition does not hold, fail with Conflict. It
// records the deletes.
type leaseServer struct {
	client *fake.Clientset

	mu      sync.Mutex
	version int
	deletes []deletion
	// beforeDelete, if set, is called with the name of each Lease to
	// delete before the delete is decided.
	beforeDelete func(name string)
	// failUpdates makes every update fail, as if the server could not be
	// reached.
	failUpdates bool
}

// deletion is a delete of a Lease: its precondition ("" without), and its
// error ("" if it deleted it).
type deletion struct {
	Name, Precondition, Err string
}

var leasesResource = coordinationv1.SchemeGroupVersion.WithResource("leases")

func newLeaseServer() *leaseServer {
	s := &leaseServer{client: fake.NewClientset()}
	s.client.PrependReactor("create", "leases", s.create)
	s.client.PrependReactor("update", "leases", s.update)
	s.client.PrependReactor("delete", "leases", s.delete)
	return s
}

func (s *leaseServer) create(action k8stesting.Action) (bool, runtime.Object, error) {
	lease := action.(k8stesting.CreateAction).GetObject().(*coordinationv1.Lease).DeepCopy()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.version++
	lease.ResourceVersion = strconv.Itoa(s.version)
	if err := s.client.Tracker().Create(leasesResource, lease, action.GetNamespace()); err != nil {
		return true, nil, err
	}
	return true, lease, nil
}

func (s *leaseServer) update(action k8stesting.Action) (bool, runtime.Object, error) {
	lease := action.(k8stesting.UpdateAction).GetObject().(*coordinationv1.Lease).DeepCopy()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failUpdates {
		return true, nil, apierrors.NewServiceUnavailable("cut off")
	}
	updated, err := s.updateLocked(lease, action.GetNamespace())
	return true, updated, err
}

// updateLocked writes lease, if its resourceVersion is the stored one (or
// empty), with a new one.
func (s *leaseServer) updateLocked(lease *coordinationv1.Lease, namespace string) (*coordinationv1.Lease, error) {
	stored, err := s.client.Tracker().Get(leasesResource, namespace, lease.Name)
	if err != nil {
		return nil, err
	}
	if rv := stored.(*coordinationv1.Lease).ResourceVersion; lease.ResourceVersion != "" && lease.ResourceVersion != rv {
		return nil, apierrors.NewConflict(leasesResource.GroupResource(), lease.Name, nil)
	}
	s.version++
	lease.ResourceVersion = strconv.Itoa(s.version)
	if err := s.client.Tracker().Update(leasesResource, lease, namespace); err != nil {
		return nil, err
	}
	return lease, nil
}

func (s *leaseServer) delete(action k8stesting.Action) (bool, runtime.Object, error) {
	del := action.(k8stesting.DeleteAction)
	name, namespace := del.GetName(), del.GetNamespace()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.beforeDelete != nil {
		s.beforeDelete(name)
	}
	d := deletion{Name: name}
	err := func() error {
		stored, err := s.client.Tracker().Get(leasesResource, namespace, name)
		if err != nil {
			return err
		}
		if p := del.GetDeleteOptions().Preconditions; p != nil && p.ResourceVersion != nil {
			d.Precondition = *p.ResourceVersion
			if *p.ResourceVersion != stored.(*coordinationv1.Lease).ResourceVersion {
				return apierrors.NewConflict(leasesResource.GroupResource(), name, nil)
			}
		}
		return s.client.Tracker().Delete(leasesResource, namespace, name)
	}()
	if err != nil {
		d.Err = string(apierrors.ReasonForError(err))
	}
	s.deletes = append(s.deletes, d)
	return true, nil, err
}

// renewLocked renews the Lease name, as its replica would, with s.mu
// held (from beforeDelete).
func (s *leaseServer) renewLocked(name string, now time.Time) (string, error) {
	stored, err := s.client.Tracker().Get(leasesResource, "ns", name)
	if err != nil {
		return "", err
	}
	lease := stored.(*coordinationv1.Lease).DeepCopy()
	renewed := metav1.NewMicroTime(now)
	lease.Spec.RenewTime = &renewed
	updated, err := s.updateLocked(lease, "ns")
	if err != nil {
		return "", err
	}
	return updated.ResourceVersion, nil
}

// deletions returns the deletes of Leases so far.
func (s *leaseServer) deletions() []deletion {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.deletes)
}

// leases returns the names of the group's Leases, sorted.
func (rs *replicas) leases() []string {
	rs.t.Helper()
	list, err := rs.client.CoordinationV1().Leases("ns").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		rs.t.Fatal(err)
	}
	var names []string
	for _, lease := range list.Items {
		names = append(names, lease.Name)
	}
	slices.Sort(names)
	return names
}

// resourceVersionOf returns the resourceVersion of the Lease name.
func (rs *replicas) resourceVersionOf(name string) string {
	rs.t.Helper()
	lease, err := rs.client.CoordinationV1().Leases("ns").Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		rs.t.Fatal(err)
	}
	return lease.ResourceVersion
}

// defaultTimings are the root package's defaults (client-go leader
// election's).
var defaultTimings = Config{RetryPeriod: 2 * time.Second, RenewDeadline: 10 * time.Second, LeaseDuration: 15 * time.Second}

// newClockedReplicas returns replicas whose runners run on a fake clock
// (advanceUntil moves it), with the default timings. Start them with
// startLeaving(id, 0): a clean leave would wait on the clock. They are
// killed when the test ends.
func newClockedReplicas(t *testing.T) *replicas {
	rs := newReplicas(t)
	rs.timings = defaultTimings
	rs.clock = testingclock.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	t.Cleanup(func() {
		rs.mu.Lock()
		var ids []string
		for id := range rs.running {
			ids = append(ids, id)
		}
		rs.mu.Unlock()
		for _, id := range ids {
			rs.kill(id)
		}
	})
	return rs
}

// idle waits until every goroutine of the running replicas waits on the
// fake clock: each of the three of a Runner (steps, renewals, watchdog)
// then holds one timer, and nothing moves until the clock does.
func (rs *replicas) idle() {
	rs.t.Helper()
	var waiters, want int
	err := wait.PollUntilContextTimeout(context.Background(), time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		rs.mu.Lock()
		want = 3 * len(rs.running)
		rs.mu.Unlock()
		waiters = rs.clock.Waiters()
		return waiters == want, nil
	})
	if err != nil {
		rs.t.Fatalf("%d timers on the fake clock, want %d: a runner is not waiting on it", waiters, want)
	}
}

// advanceUntil moves the fake clock by tenths of a RetryPeriod, letting
// the runners do all they can after each move, until done, and returns
// how far it moved it; it fails the test once it moved it by limit.
func (rs *replicas) advanceUntil(what string, limit time.Duration, done func() bool) time.Duration {
	rs.t.Helper()
	moved, ok := rs.advance(limit, done)
	if !ok {
		rs.t.Fatalf("%s: not within %v", what, limit)
	}
	return moved
}

// advance moves the fake clock by tenths of a RetryPeriod, letting the
// runners do all they can after each move, until done or it moved it by
// limit; it returns how far it moved it, and whether done.
func (rs *replicas) advance(limit time.Duration, done func() bool) (time.Duration, bool) {
	rs.t.Helper()
	tick := rs.timings.RetryPeriod / 10
	var moved time.Duration
	for {
		rs.idle()
		if done() {
			return moved, true
		}
		if moved >= limit {
			return moved, false
		}
		rs.clock.Step(tick)
		moved += tick
	}
}

// advanceUntilSettled moves the fake clock until ids have settled on
// their view, and returns how far it moved it.
func (rs *replicas) advanceUntilSettled(limit time.Duration, ids ...string) time.Duration {
	rs.t.Helper()
	var last []string
	took, ok := rs.advance(limit, func() bool {
		last = rs.unsettled(ids)
		return last == nil
	})
	if !ok {
		rs.t.Fatalf("not settled on %v within %v: %v", ids, limit, last)
	}
	rs.mu.Lock()
	rs.lost = false
	rs.mu.Unlock()
	return took
}

// checkViolations fails the test if the replicas broke a promise.
func (rs *replicas) checkViolations() {
	rs.t.Helper()
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if diff := cmp.Diff([]string(nil), rs.violations); diff != "" {
		rs.t.Errorf("violations (-want +got):\n%s", diff)
	}
}

// settleLimit bounds a settle of a few replicas in fake time, leaving a
// dead one's Lease to expire included.
const settleLimit = 2 * 15 * time.Second

// TestRunnerDeletesDeadLease: of three replicas, one is killed without a
// word; once the two others have taken its shard, they delete its Lease,
// on the condition that it is still as they read it, within a couple of
// RetryPeriods; until then it stays.
func TestRunnerDeletesDeadLease(t *testing.T) {
	rs := newClockedReplicas(t)
	for _, id := range []string{"a", "b", "k"} {
		rs.startLeaving(id, 0)
	}
	rs.advanceUntilSettled(settleLimit, "a", "b", "k")
	rs.kill("k")
	rv := rs.resourceVersionOf("k")
	// k renewed its Lease at most 1.2 RetryPeriods before it was killed:
	// it is live for the others until then.
	rs.advance(defaultTimings.LeaseDuration-2*defaultTimings.RetryPeriod, func() bool { return false })
	if diff := cmp.Diff([]string{"a", "b", "k"}, rs.leases()); diff != "" {
		t.Errorf("Leases before k's expired (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]deletion(nil), rs.server.deletions()); diff != "" {
		t.Errorf("deletes of Leases before k's expired (-want +got):\n%s", diff)
	}
	rs.advanceUntilSettled(settleLimit, "a", "b")
	rs.advanceUntil("k's Lease deleted", 2*defaultTimings.RetryPeriod, func() bool { return !slices.Contains(rs.leases(), "k") })
	if diff := cmp.Diff([]string{"a", "b"}, rs.leases()); diff != "" {
		t.Errorf("Leases after a and b took k's shard (-want +got):\n%s", diff)
	}
	var deleted []deletion
	for _, d := range rs.server.deletions() {
		if d.Err == "" {
			deleted = append(deleted, d)
		}
	}
	if diff := cmp.Diff([]deletion{{Name: "k", Precondition: rv}}, deleted); diff != "" {
		t.Errorf("deletes of Leases (-want +got):\n%s", diff)
	}
	rs.checkViolations()
}

// TestRunnerKeepsRenewedLease: a Lease that its replica renewed after the
// others read it expired is not deleted (the delete's precondition fails);
// it is live again, and is deleted once it has expired anew, with its new
// resourceVersion.
func TestRunnerKeepsRenewedLease(t *testing.T) {
	rs := newClockedReplicas(t)
	for _, id := range []string{"a", "b", "k"} {
		rs.startLeaving(id, 0)
	}
	rs.advanceUntilSettled(settleLimit, "a", "b", "k")
	rs.kill("k")
	expired := rs.resourceVersionOf("k")
	var renewed string
	var once sync.Once
	rs.server.mu.Lock()
	rs.server.beforeDelete = func(name string) {
		if name != "k" {
			return
		}
		once.Do(func() {
			var err error
			if renewed, err = rs.server.renewLocked("k", rs.clock.Now()); err != nil {
				t.Errorf("renewing k's Lease: %v", err)
			}
		})
	}
	rs.server.mu.Unlock()
	attempted := func() bool { return len(rs.server.deletions()) > 0 }
	rs.advanceUntil("a delete of k's Lease", settleLimit, attempted)
	if diff := cmp.Diff([]string{"a", "b", "k"}, rs.leases()); diff != "" {
		t.Errorf("Leases after k's was renewed before its delete (-want +got):\n%s", diff)
	}
	rs.advanceUntil("k's renewed Lease deleted", 2*settleLimit, func() bool { return !slices.Contains(rs.leases(), "k") })
	var got []deletion
	for _, d := range rs.server.deletions() {
		if d.Err != string(metav1.StatusReasonNotFound) { // the other survivor's, late
			got = append(got, d)
		}
	}
	want := []deletion{
		{Name: "k", Precondition: expired, Err: string(metav1.StatusReasonConflict)},
		{Name: "k", Precondition: renewed},
	}
	// Both survivors may read it expired before either deletes it.
	got = slices.CompactFunc(got, func(x, y deletion) bool { return x == y })
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("deletes of k's Lease (-want +got):\n%s", diff)
	}
	rs.advanceUntilSettled(settleLimit, "a", "b")
	rs.checkViolations()
}

// TestJoinAfterCrashSettlesQuickly: a replica that joins a group after one
// of its replicas crashed (and the others took its shard) settles about as
// fast as one that joins a group where none crashed: it never sees the
// dead replica's Lease, which it would count live for a whole
// LeaseDuration from its first read of it.
func TestJoinAfterCrashSettlesQuickly(t *testing.T) {
	join := func(t *testing.T, crash bool) time.Duration {
		rs := newClockedReplicas(t)
		ids := []string{"a", "c"}
		if crash {
			ids = append(ids, "k")
		}
		for _, id := range ids {
			rs.startLeaving(id, 0)
		}
		rs.advanceUntilSettled(settleLimit, ids...)
		if crash {
			rs.kill("k")
			rs.advanceUntilSettled(settleLimit, "a", "c")
		}
		// As long in both cases: the time a takeover's cleanup takes.
		rs.advance(3*defaultTimings.RetryPeriod, func() bool { return false })
		rs.startLeaving("d", 0)
		took := rs.advanceUntilSettled(settleLimit, "a", "c", "d")
		rs.checkViolations()
		return took
	}
	var healthy, afterCrash time.Duration
	t.Run("healthy", func(t *testing.T) { healthy = join(t, false) })
	t.Run("after a crash", func(t *testing.T) { afterCrash = join(t, true) })
	t.Logf("a join settled in %v into a healthy group, %v after a crash", healthy, afterCrash)
	if bound := healthy + 3*defaultTimings.RetryPeriod; afterCrash > bound || afterCrash >= defaultTimings.LeaseDuration {
		t.Errorf("a join after a crash settled in %v, want at most %v (a join into a healthy group: %v, and three RetryPeriods), less than LeaseDuration %v",
			afterCrash, bound, healthy, defaultTimings.LeaseDuration)
	}
}

// ownedStatus is what a Status says of what the replica owns, and why.
type ownedStatus struct {
	Owned                      Interval
	Owns, Leaving, SteppedDown bool
}

func ownedStatusOf(s Status) ownedStatus {
	return ownedStatus{Owned: s.Owned, Owns: s.Owns, Leaving: s.Announced.Leaving, SteppedDown: s.SteppedDown}
}

// TestRunnerStatus: whichever path made a settled replica own nothing (a
// clean leave, a step-down), its Status says so, as the Own hook reads it
// and after.
func TestRunnerStatus(t *testing.T) {
	none := Interval{Empty: true}
	tests := []struct {
		name string
		// leave is the replica's (a clean leave that waits on the fake
		// clock would wait for ever).
		leave time.Duration
		move  func(rs *replicas, r *Runner)
		want  ownedStatus
	}{
		{"leaving", time.Minute, func(rs *replicas, _ *Runner) {
			rs.stop("a") // alone: it releases its Lease at once
		}, ownedStatus{Owned: none, Leaving: true}},
		{"stepped down", 0, func(rs *replicas, r *Runner) {
			rs.server.mu.Lock()
			rs.server.failUpdates = true
			rs.server.mu.Unlock()
			rs.advanceUntil("a stepped down", defaultTimings.RenewDeadline+defaultTimings.RetryPeriod, func() bool { return r.Status().SteppedDown })
		}, ownedStatus{Owned: none, SteppedDown: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rs := newClockedReplicas(t)
			rs.startLeaving("a", tt.leave)
			rs.advanceUntilSettled(settleLimit, "a")
			rs.mu.Lock()
			r := rs.running["a"].runner
			rs.mu.Unlock()
			tt.move(rs, r)
			if diff := cmp.Diff(tt.want, ownedStatusOf(r.Status())); diff != "" {
				t.Errorf("Status (-want +got):\n%s", diff)
			}
			rs.mu.Lock()
			hook := rs.ownStatus["a"]
			rs.mu.Unlock()
			if diff := cmp.Diff(tt.want, ownedStatusOf(hook)); diff != "" {
				t.Errorf("Status as the Own hook read it (-want +got):\n%s", diff)
			}
		})
	}
}
