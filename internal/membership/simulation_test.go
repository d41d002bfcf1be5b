package membership

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/generic-informers/generic/internal/shardsel"
)

// The simulation runs replicas of a controller against a model of their
// Leases, each replica doing its steps (Next) in a random order, while a
// script changes the membership, and checks after every step what the
// protocol promises:
//
//   - no hash is owned by two replicas that run (a partitioned replica
//     runs: it may reconcile what it believes it owns);
//   - where no replica crashed or was cut off, every hash is in the cache
//     of a running, connected replica: no moment at which an object is in
//     no cache;
//   - once the script is done and the replicas stop moving, each live
//     replica caches and owns exactly its shard of the view of them all,
//     and those that left hold nothing.

// replica is one replica of the model: its own state, what its informers
// cache, what it owns.
type replica struct {
	id          string
	state       State
	cache       []Interval
	owned       Interval
	running     bool // its process runs
	partitioned bool // its requests fail
	released    bool // it left, and released its Lease
	// seen is the Leases as it last read them: its informer of Leases
	// lags the server.
	seen []Member
}

// cluster is the model: the replicas and their Leases as the API server
// holds them (a live Lease each).
type cluster struct {
	replicas map[string]*replica
	leases   map[string]Announcement
	// lost is whether a replica crashed or was cut off: coverage is then
	// not promised until the others have moved.
	lost bool
	// coveredOnce is whether every hash has been in some cache: before,
	// the first replicas are still filling theirs.
	coveredOnce bool
	// rand decides when a replica reads the Leases anew.
	rand *rand.Rand
}

func newCluster(r *rand.Rand) *cluster {
	return &cluster{replicas: map[string]*replica{}, leases: map[string]Announcement{}, rand: r}
}

func (c *cluster) join(id string) {
	c.replicas[id] = &replica{id: id, owned: Interval{Empty: true}, running: true}
	c.leases[id] = Announcement{}
}

// leave starts a clean leave: the replica owns nothing from now on, and
// says it is leaving.
func (c *cluster) leave(id string) {
	r := c.replicas[id]
	r.owned = Interval{Empty: true}
	r.state.Announced.Leaving = true
	c.leases[id] = r.state.Announced
}

// crash stops a replica without a word: its Lease stays live until
// expire.
func (c *cluster) crash(id string) {
	c.replicas[id].running = false
	c.lost = true
}

// partition cuts a replica off the API server: by the time the others can
// see its Lease expire, it has stepped down (RenewDeadline < LeaseDuration).
func (c *cluster) partition(id string) {
	r := c.replicas[id]
	r.partitioned = true
	r.owned = Interval{Empty: true}
	c.lost = true
}

// expire is the others seeing a Lease not renewed for LeaseDuration.
func (c *cluster) expire(id string) { delete(c.leases, id) }

// members is the live Leases, as every replica reads them.
func (c *cluster) members() []Member {
	var ms []Member
	for id, a := range c.leases {
		ms = append(ms, Member{Identity: id, Announcement: a})
	}
	slices.SortFunc(ms, func(a, b Member) int { return strings.Compare(a.Identity, b.Identity) })
	return ms
}

// step does r's next step, and reports whether it did anything.
func (c *cluster) step(r *replica) bool {
	if !r.running || r.partitioned || r.released {
		return false
	}
	if r.seen == nil || c.rand.IntN(2) == 0 {
		r.seen = c.members()
	}
	s := Next(r.id, r.seen, r.state)
	if s.Action.NeedsConsistentRead() {
		// As the runner does: confirmed on the Leases as they are.
		r.seen = c.members()
		if fresh := Next(r.id, r.seen, r.state); fresh.Action != s.Action {
			return false
		}
	}
	switch s.Action {
	case Wait:
		return false
	case StepDown:
		if r.owned.Empty {
			return false
		}
		r.owned = Interval{Empty: true}
		return true
	case Widen:
		r.cache = append(r.cache, IntervalOf(s.Shard))
		r.state = State{Announced: s.Announce}
	case Narrow:
		r.cache = []Interval{IntervalOf(s.Shard)}
		r.owned = r.owned.Intersect(IntervalOf(s.Shard))
		r.state = State{Announced: s.Announce}
	case Own:
		r.owned = IntervalOf(s.Shard)
		r.state.Owns = true
	case Release:
		r.cache, r.released = nil, true
		delete(c.leases, r.id)
		return true
	}
	c.leases[r.id] = r.state.Announced
	return true
}

// check returns what breaks the promises now, or "".
func (c *cluster) check(samples []uint64) string {
	uncovered := ""
	for _, h := range samples {
		var owners []string
		covered := false
		for _, r := range c.replicas {
			if r.running && !r.released && r.owned.Contains(h) {
				owners = append(owners, r.id)
			}
			if r.running && !r.partitioned && !r.released && slices.ContainsFunc(r.cache, func(i Interval) bool { return i.Contains(h) }) {
				covered = true
			}
		}
		if len(owners) > 1 {
			slices.Sort(owners)
			return fmt.Sprintf("hash %#x owned by %v", h, owners)
		}
		if !covered && uncovered == "" {
			uncovered = fmt.Sprintf("hash %#x in no cache", h)
		}
	}
	switch {
	case uncovered == "":
		c.coveredOnce = true
	case c.coveredOnce && !c.lost && c.staying():
		return uncovered
	}
	return ""
}

// staying reports whether a replica runs that is not leaving: when the
// last ones leave, nothing is left to cache.
func (c *cluster) staying() bool {
	for _, r := range c.replicas {
		if r.running && !r.released && !r.state.Announced.Leaving {
			return true
		}
	}
	return false
}

// settled returns how far each replica is from its shard of the view of
// the live replicas, once none moves: nothing if all are there.
func (c *cluster) settled() []string {
	var ids []string
	for id, r := range c.replicas {
		if r.running && !r.partitioned && !r.released && !r.state.Announced.Leaving {
			ids = append(ids, id)
		}
	}
	view := ViewOf(ids)
	var wrong []string
	for _, r := range c.replicas {
		switch {
		case !r.running || r.partitioned:
		case r.released || r.state.Announced.Leaving:
			if !r.released || len(r.cache) > 0 || !r.owned.Empty {
				wrong = append(wrong, fmt.Sprintf("%s left but holds cache %v, owns %v", r.id, r.cache, r.owned))
			}
		default:
			shard, _ := view.ShardOf(r.id)
			want := IntervalOf(shard)
			if !slices.Equal(r.cache, []Interval{want}) || r.owned != want {
				wrong = append(wrong, fmt.Sprintf("%s (shard %v) caches %v, owns %v", r.id, shard, r.cache, r.owned))
			}
		}
	}
	slices.Sort(wrong)
	return wrong
}

// event is one change of the script.
type event func(c *cluster)

func join(id string) event      { return func(c *cluster) { c.join(id) } }
func leave(id string) event     { return func(c *cluster) { c.leave(id) } }
func crash(id string) event     { return func(c *cluster) { c.crash(id) } }
func partition(id string) event { return func(c *cluster) { c.partition(id) } }
func expire(id string) event    { return func(c *cluster) { c.expire(id) } }

// TestSimulation runs each script with many step orders (seeded: the same
// every run), the script's events coming between random numbers of steps.
func TestSimulation(t *testing.T) {
	scripts := []struct {
		name   string
		events []event
	}{
		{"one replica", []event{join("a")}},
		{"1 -> 3 -> 2 -> 4", []event{
			join("a"),
			join("b"), join("c"),
			leave("b"),
			join("d"), join("e"), join("f"),
		}},
		{"joins and leaves at once", []event{join("a"), join("b"), leave("a"), join("c"), leave("b"), join("a2")}},
		{"a crash", []event{join("a"), join("b"), join("c"), crash("b"), expire("b")}},
		{"a crash during a join", []event{join("a"), join("b"), join("c"), crash("a"), join("d"), expire("a")}},
		{"a partition", []event{join("a"), join("b"), join("c"), partition("c"), expire("c")}},
		{"the last one leaves", []event{join("a"), join("b"), leave("a"), leave("b")}},
	}
	samples := sampleHashes()
	for _, script := range scripts {
		t.Run(script.name, func(t *testing.T) {
			for seed := range uint64(300) {
				if failure := simulate(seed, script.events, samples); failure != "" {
					t.Fatalf("seed %d: %s", seed, failure)
				}
			}
		})
	}
}

// simulate runs events with steps of random replicas between them, then
// steps until none moves, and returns the first broken promise, or "".
func simulate(seed uint64, events []event, samples []uint64) string {
	r := rand.New(rand.NewPCG(seed, 28))
	c := newCluster(r)
	stepSome := func(n int) string {
		ids := make([]string, 0, len(c.replicas))
		for id := range c.replicas {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		for range n {
			if len(ids) == 0 {
				return ""
			}
			rep := c.replicas[ids[r.IntN(len(ids))]]
			if c.step(rep) {
				if failure := c.check(samples); failure != "" {
					return fmt.Sprintf("after a step of %s: %s", rep.id, failure)
				}
			}
		}
		return ""
	}
	for i, e := range events {
		e(c)
		if failure := c.check(samples); failure != "" {
			return fmt.Sprintf("after event %d: %s", i, failure)
		}
		if failure := stepSome(r.IntN(12)); failure != "" {
			return failure
		}
	}
	for range 1000 {
		moved := false
		for _, rep := range c.replicas {
			rep.seen = nil // settled: every replica has read the Leases as they are
			if c.step(rep) {
				moved = true
				if failure := c.check(samples); failure != "" {
					return fmt.Sprintf("settling, after a step of %s: %s", rep.id, failure)
				}
			}
		}
		if !moved {
			if wrong := c.settled(); wrong != nil {
				return fmt.Sprintf("settled wrong: %s", cmp.Diff([]string(nil), wrong))
			}
			return ""
		}
	}
	return "never settled"
}

// sampleHashes are the hashes checked: the bounds of the shards of up to
// six replicas, each side, and random ones.
func sampleHashes() []uint64 {
	var hs []uint64
	for n := 1; n <= 6; n++ {
		for i := range n {
			iv := IntervalOf(shardsel.Range{Index: i, Count: n})
			hs = append(hs, iv.Lo, iv.Last)
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 64 {
		hs = append(hs, r.Uint64())
	}
	return hs
}
