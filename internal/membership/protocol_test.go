package membership

import (
	"math"
	"math/big"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/generic-informers/generic/internal/shardsel"
)

// TestNext: each step of the protocol, from what a replica sees.
func TestNext(t *testing.T) {
	one, two, three := ViewOf([]string{"a"}), ViewOf([]string{"a", "b"}), ViewOf([]string{"a", "b", "c"})
	widened := func(v View) Announcement { return Announcement{View: v.Fingerprint(), Phase: Widened} }
	narrowed := func(v View) Announcement { return Announcement{View: v.Fingerprint(), Phase: Narrowed} }
	leaving := func(a Announcement) Announcement { a.Leaving = true; return a }
	type got struct {
		Action   Action
		Shard    shardsel.Range
		Announce Announcement
	}
	tests := []struct {
		name    string
		self    string
		members []Member
		own     State
		want    got
	}{
		{"its own Lease not live", "a", []Member{{"b", narrowed(two)}}, State{Announced: narrowed(two), Owns: true},
			got{Action: StepDown}},
		{"the first replica", "a", []Member{{"a", Announcement{}}}, State{},
			got{Action: Widen, Shard: shardsel.Range{Index: 0, Count: 1}, Announce: widened(one)}},
		{"alone, widened", "a", []Member{{"a", widened(one)}}, State{Announced: widened(one)},
			got{Action: Narrow, Shard: shardsel.Range{Index: 0, Count: 1}, Announce: narrowed(one)}},
		{"alone, narrowed", "a", []Member{{"a", narrowed(one)}}, State{Announced: narrowed(one)},
			got{Action: Own, Shard: shardsel.Range{Index: 0, Count: 1}}},
		{"alone, owning", "a", []Member{{"a", narrowed(one)}}, State{Announced: narrowed(one), Owns: true},
			got{Action: Wait, Shard: shardsel.Range{Index: 0, Count: 1}}},
		{"a replica joins", "a", []Member{{"a", narrowed(one)}, {"b", Announcement{}}}, State{Announced: narrowed(one), Owns: true},
			got{Action: Widen, Shard: shardsel.Range{Index: 0, Count: 2}, Announce: widened(two)}},
		{"the joiner is second by identity", "b", []Member{{"a", narrowed(one)}, {"b", Announcement{}}}, State{},
			got{Action: Widen, Shard: shardsel.Range{Index: 1, Count: 2}, Announce: widened(two)}},
		{"widened, waiting for the others", "a", []Member{{"a", widened(two)}, {"b", Announcement{}}}, State{Announced: widened(two)},
			got{Action: Wait, Shard: shardsel.Range{Index: 0, Count: 2}}},
		{"widened, the others narrowed already", "a", []Member{{"a", widened(two)}, {"b", narrowed(two)}}, State{Announced: widened(two)},
			got{Action: Narrow, Shard: shardsel.Range{Index: 0, Count: 2}, Announce: narrowed(two)}},
		{"narrowed, waiting for the others to narrow", "a", []Member{{"a", narrowed(two)}, {"b", widened(two)}}, State{Announced: narrowed(two)},
			got{Action: Wait, Shard: shardsel.Range{Index: 0, Count: 2}}},
		{"its own announcement counts, not the Lease's as read", "a", []Member{{"a", widened(two)}, {"b", narrowed(two)}}, State{Announced: narrowed(two)},
			got{Action: Own, Shard: shardsel.Range{Index: 0, Count: 2}}},
		{"a member announces another view", "a", []Member{{"a", widened(two)}, {"b", widened(three)}}, State{Announced: widened(two)},
			got{Action: Wait, Shard: shardsel.Range{Index: 0, Count: 2}}},
		{"a member leaves", "a", []Member{{"a", narrowed(three)}, {"b", leaving(narrowed(three))}, {"c", narrowed(three)}}, State{Announced: narrowed(three), Owns: true},
			got{Action: Widen, Shard: shardsel.Range{Index: 0, Count: 2}, Announce: widened(ViewOf([]string{"a", "c"}))}},
		{"leaving, the others not narrowed yet", "b", []Member{{"a", widened(ViewOf([]string{"a", "c"}))}, {"b", narrowed(three)}, {"c", narrowed(three)}}, State{Announced: leaving(narrowed(three))},
			got{Action: Wait}},
		{"leaving, the others narrowed", "b", []Member{{"a", narrowed(ViewOf([]string{"a", "c"}))}, {"b", narrowed(three)}, {"c", narrowed(ViewOf([]string{"a", "c"}))}}, State{Announced: leaving(narrowed(three))},
			got{Action: Release}},
		{"the last one leaving", "a", []Member{{"a", narrowed(one)}}, State{Announced: leaving(narrowed(one))},
			got{Action: Release}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := Next(tc.self, tc.members, tc.own)
			if diff := cmp.Diff(tc.want, got{s.Action, s.Shard, s.Announce}); diff != "" {
				t.Errorf("step (-want +got):\n%s", diff)
			}
		})
	}
}

// TestShardIntervals: the shards of a count are the hash ranges of
// KEP-5866, [i·2^64/n, (i+1)·2^64/n) rounded down (computed here with big
// integers), so they are disjoint and cover the hash space.
func TestShardIntervals(t *testing.T) {
	var wrong []string
	for n := 1; n <= 7; n++ {
		for i := range n {
			got := IntervalOf(shardsel.Range{Index: i, Count: n})
			want := Interval{Lo: boundOf(i, n), Last: boundOf(i+1, n) - 1}
			if i == n-1 {
				want.Last = math.MaxUint64
			}
			if got != want {
				wrong = append(wrong, shardsel.Range{Index: i, Count: n}.String()+": "+got.String()+", want "+want.String())
			}
		}
	}
	if diff := cmp.Diff([]string(nil), wrong); diff != "" {
		t.Errorf("intervals (-want +got):\n%s", diff)
	}
}

func boundOf(i, n int) uint64 {
	b := new(big.Int).Lsh(big.NewInt(int64(i)), 64)
	b.Quo(b, big.NewInt(int64(n)))
	if !b.IsUint64() {
		return 0
	}
	return b.Uint64()
}

// TestViewOf: a view is its identities sorted, each once; its fingerprint
// differs where the views differ, even where their identities written
// one after the other would be alike.
func TestViewOf(t *testing.T) {
	v := ViewOf([]string{"c", "a", "b", "a"})
	if diff := cmp.Diff(View{"a", "b", "c"}, v); diff != "" {
		t.Errorf("view (-want +got):\n%s", diff)
	}
	fingerprints := map[string]View{}
	for _, view := range []View{{}, {"a"}, {"ab"}, {"a", "b"}, {"a", "b", "c"}, {"a", "bc"}, {"ab", "c"}} {
		f := view.Fingerprint()
		if other, ok := fingerprints[f]; ok {
			t.Errorf("views %v and %v have one fingerprint %s", other, view, f)
		}
		fingerprints[f] = view
	}
}
