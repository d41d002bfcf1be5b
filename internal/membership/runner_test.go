package membership

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/fake"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/generic-informers/generic/internal/shardsel"
)

// replicas are Runners over one fake API server's Leases, with hooks that
// record what each caches and owns, and check after every hook call that
// no hash is owned by two running replicas and, once every hash was
// cached, that every hash stays cached by a running replica.
type replicas struct {
	t       *testing.T
	server  *leaseServer
	client  *fake.Clientset
	samples []uint64
	// timings are the runners'; clock is theirs, nil for the real one
	// (see newClockedReplicas).
	timings Config
	clock   *testingclock.FakeClock

	mu    sync.Mutex
	cache map[string][]Interval
	owned map[string]Interval
	// ownStatus is each replica's Status as its Own hook last read it.
	ownStatus   map[string]Status
	running     map[string]*running
	coveredOnce bool
	// lost is whether a replica was killed: hashes may be in no cache
	// until the others have taken its shard.
	lost       bool
	violations []string
}

type running struct {
	runner *Runner
	cancel context.CancelFunc
	done   chan error
}

func newReplicas(t *testing.T) *replicas {
	server := newLeaseServer()
	return &replicas{t: t, server: server, client: server.client, samples: sampleHashes(), timings: testTimings,
		cache: map[string][]Interval{}, owned: map[string]Interval{}, ownStatus: map[string]Status{}, running: map[string]*running{}}
}

var testTimings = Config{RetryPeriod: 20 * time.Millisecond, RenewDeadline: 300 * time.Millisecond, LeaseDuration: 600 * time.Millisecond}

func (rs *replicas) start(id string) { rs.startLeaving(id, 10*time.Second) }

// startLeaving starts a replica that leaves within leave when stopped
// (with 0, it is killed instead).
func (rs *replicas) startLeaving(id string, leave time.Duration) {
	config := rs.timings
	config.Client, config.Group, config.Identity = rs.client.CoordinationV1().Leases("ns"), "g", id
	if rs.clock != nil {
		config.Clock = rs.clock
	}
	if err := config.Validate(); err != nil {
		rs.t.Fatal(err)
	}
	var runner *Runner
	runner = NewRunner(config, Hooks{
		Widen: func(_ context.Context, s shardsel.Range) error {
			rs.record(func() { rs.cache[id] = append(rs.cache[id], IntervalOf(s)) })
			return nil
		},
		Narrow: func(_ context.Context, s shardsel.Range) error {
			rs.record(func() {
				// The objects that leave the cache reach the handlers as
				// deletes: none may be of an object still owned.
				if owned := rs.owned[id]; owned.Intersect(IntervalOf(s)) != owned {
					rs.violations = append(rs.violations, fmt.Sprintf("%s narrowed to %v owning %v", id, s, owned))
				}
				rs.cache[id] = []Interval{IntervalOf(s)}
			})
			return nil
		},
		Own: func(owned Interval) {
			// A hook may call back into its Runner (before, Own ran
			// under the Runner's lock: this deadlocked at once).
			status := runner.Status()
			rs.record(func() { rs.owned[id], rs.ownStatus[id] = owned, status })
		},
	})
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{runner: runner, cancel: cancel, done: make(chan error, 1)}
	rs.mu.Lock()
	rs.running[id] = r
	rs.owned[id] = Interval{Empty: true}
	rs.mu.Unlock()
	go func() { r.done <- runner.Run(ctx, leave) }()
}

// stop makes a replica leave cleanly, and waits until it has.
func (rs *replicas) stop(id string) {
	rs.mu.Lock()
	r := rs.running[id]
	rs.mu.Unlock()
	r.cancel()
	if err := <-r.done; err != nil {
		rs.t.Errorf("%s: Run: %v", id, err)
	}
	rs.record(func() {
		delete(rs.running, id)
		delete(rs.cache, id)
		delete(rs.owned, id)
	})
}

// record changes the model under the lock, then checks it.
func (rs *replicas) record(change func()) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	change()
	uncovered := ""
	for _, h := range rs.samples {
		var owners []string
		covered := false
		for id := range rs.running {
			if rs.owned[id].Contains(h) {
				owners = append(owners, id)
			}
			if slices.ContainsFunc(rs.cache[id], func(i Interval) bool { return i.Contains(h) }) {
				covered = true
			}
		}
		if len(owners) > 1 {
			slices.Sort(owners)
			rs.violations = append(rs.violations, fmt.Sprintf("hash %#x owned by %v", h, owners))
		}
		if !covered && uncovered == "" {
			uncovered = fmt.Sprintf("hash %#x in no cache", h)
		}
	}
	switch {
	case uncovered == "":
		rs.coveredOnce = true
	case rs.coveredOnce && !rs.lost && len(rs.running) > 0:
		rs.violations = append(rs.violations, uncovered)
	}
}

// waitSettled waits until each of ids caches and owns exactly its shard of
// their view, and says so, failing after a minute.
func (rs *replicas) waitSettled(ids ...string) {
	rs.t.Helper()
	var last []string
	err := wait.PollUntilContextTimeout(context.Background(), 10*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		last = rs.unsettled(ids)
		return last == nil, nil
	})
	if err != nil {
		rs.t.Fatalf("not settled on %v: %v", ids, last)
	}
	rs.mu.Lock()
	rs.lost = false
	rs.mu.Unlock()
}

// unsettled returns how far each of ids is from caching and owning
// exactly its shard of their view, and saying so: nothing once they all
// are.
func (rs *replicas) unsettled(ids []string) []string {
	view := ViewOf(ids)
	rs.mu.Lock()
	defer rs.mu.Unlock()
	var wrong []string
	for _, id := range ids {
		shard, _ := view.ShardOf(id)
		status := rs.running[id].runner.Status()
		if !slices.Equal(rs.cache[id], []Interval{IntervalOf(shard)}) || rs.owned[id] != IntervalOf(shard) || !status.Owns || status.Shard != shard {
			wrong = append(wrong, fmt.Sprintf("%s (shard %v): caches %v, owns %v, status %+v", id, shard, rs.cache[id], rs.owned[id], status))
		}
	}
	return wrong
}

// kill stops a replica as a crash would: without a word, its Lease left
// to expire.
func (rs *replicas) kill(id string) {
	rs.mu.Lock()
	rs.lost = true
	rs.mu.Unlock()
	rs.stop(id)
}

// TestRunnerScales runs replicas on a fake API server's Leases and scales
// them 1 -> 4 -> 3 (one leaves) -> 2 (one is killed) -> 4, each change
// once the last has settled: after each, every replica caches and owns its
// shard of the view; throughout, no hash is owned twice, none is
// uncached (but after the kill, until the others have taken its shard);
// a replica narrows its cache only after owning no more than it keeps; a
// replica that left released its Lease, and the others deleted the killed
// one's once they had taken its shard.
func TestRunnerScales(t *testing.T) {
	rs := newReplicas(t)
	rs.start("a")
	rs.waitSettled("a")
	rs.start("b")
	rs.start("c")
	rs.startLeaving("k", 0)
	rs.waitSettled("a", "b", "c", "k")
	rs.stop("b")
	rs.waitSettled("a", "c", "k")
	rs.kill("k")
	rs.waitSettled("a", "c")
	var names []string
	if err := wait.PollUntilContextTimeout(context.Background(), 10*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		names = rs.leases()
		return slices.Equal(names, []string{"a", "c"}), nil
	}); err != nil {
		t.Errorf("Leases once a and c took the killed k's shard: %v, want [a c]", names)
	}
	rs.start("d")
	rs.start("e")
	rs.waitSettled("a", "c", "d", "e")
	for _, id := range []string{"a", "c", "d", "e"} {
		rs.stop(id)
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if diff := cmp.Diff([]string(nil), rs.violations); diff != "" {
		t.Errorf("violations (-want +got):\n%s", diff)
	}
	leases, err := rs.client.CoordinationV1().Leases("ns").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(leases.Items); n != 0 {
		t.Errorf("%d Leases left after every replica left, want none", n)
	}
}

// TestStatusOwnsOnlyAfterOwnHook: Status says the replica owns its shard
// only once the Own hook has heard of it, so that a caller that sees Owns
// finds the factory's Ownership owning the shard too. Status said Owns
// from the moment the state changed, before the hook ran: a test that
// waited for Owns then found objects owned by no replica.
func TestStatusOwnsOnlyAfterOwnHook(t *testing.T) {
	server := newLeaseServer()
	config := testTimings
	config.Client, config.Group, config.Identity = server.client.CoordinationV1().Leases("ns"), "g", "a"
	type heard struct {
		Owned      bool // the hook was given a non-empty interval
		StatusOwns bool // what Status said inside the hook
	}
	var mu sync.Mutex
	var calls []heard
	var runner *Runner
	runner = NewRunner(config, Hooks{
		Widen:  func(context.Context, shardsel.Range) error { return nil },
		Narrow: func(context.Context, shardsel.Range) error { return nil },
		Own: func(owned Interval) {
			status := runner.Status()
			mu.Lock()
			calls = append(calls, heard{Owned: !owned.Empty, StatusOwns: status.Owns})
			mu.Unlock()
		},
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- runner.Run(ctx, 10*time.Second) }()
	err := wait.PollUntilContextTimeout(context.Background(), 5*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		return runner.Status().Owns, nil
	})
	cancel()
	if runErr := <-done; runErr != nil {
		t.Errorf("Run: %v", runErr)
	}
	if err != nil {
		t.Fatalf("the replica never owned its shard: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	firstOwning := slices.IndexFunc(calls, func(h heard) bool { return h.Owned })
	if firstOwning < 0 {
		t.Fatalf("the Own hook was never given the shard: %+v", calls)
	}
	if diff := cmp.Diff(heard{Owned: true, StatusOwns: false}, calls[firstOwning]); diff != "" {
		t.Errorf("the Own hook that first gave the shard, and the Status it read (-want +got):\n%s", diff)
	}
}
