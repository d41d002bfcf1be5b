package shardsel

import (
	"fmt"
	"math"
	"math/big"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/sharding"
)

// TestShardBoundsCoverTheHashSpace checks, for many counts, that the ranges
// start at 0, end at 2^64, follow each other without gap or overlap, and
// are written as the server's parser demands (16 hex digits, or 2^64).
func TestShardBoundsCoverTheHashSpace(t *testing.T) {
	for _, count := range []int{1, 2, 3, 4, 5, 7, 10, 16, 100, 1000} {
		t.Run(fmt.Sprint(count), func(t *testing.T) {
			if diff := cmp.Diff([2]string{"0x0000000000000000", "0x10000000000000000"}, [2]string{HexBound(0, count), HexBound(count, count)}); diff != "" {
				t.Errorf("first and last bounds (-want +got):\n%s", diff)
			}
			for i := range count {
				r := Range{Index: i, Count: count}.requirement("object.metadata.uid")
				if !sharding.HexLess(r.Start, r.End) {
					t.Errorf("range %d is empty: [%s, %s)", i, r.Start, r.End)
				}
				if next := (Range{Index: i + 1, Count: count}); i+1 < count && next.requirement("object.metadata.uid").Start != r.End {
					t.Errorf("range %d ends at %s, range %d starts at %s", i, r.End, i+1, next.requirement("object.metadata.uid").Start)
				}
				if len(r.Start) != 18 || (len(r.End) != 18 && r.End != "0x10000000000000000") {
					t.Errorf("range %d is not written in 16 hex digits: [%s, %s)", i, r.Start, r.End)
				}
			}
		})
	}
}

// TestBoundForms checks, for several counts n and indexes i (the first,
// the middle and the last range, and i = n, the end of the hash space),
// that the uint64 bound and its hex form agree with each other and with
// i·2^64/n computed with big integers, and that Hex, HexAfter and the
// first and last hashes of a Range write the same bounds.
func TestBoundForms(t *testing.T) {
	// forms are the bound in each form: Bound, HexBound, Hex of Bound
	// (for i < n), HexAfter the last hash of range i-1 (for i > 0), and
	// the first hash of range i (for i < n).
	type forms struct {
		Bound    uint64
		HexBound string
		Hex      string
		After    string
		First    uint64
	}
	for _, n := range []int{1, 2, 3, 7, 64, 1000} {
		for _, i := range slices.Compact([]int{0, n / 2, n - 1, n}) {
			t.Run(fmt.Sprintf("%d/%d", i, n), func(t *testing.T) {
				exact := new(big.Int).Div(new(big.Int).Lsh(big.NewInt(int64(i)), 64), big.NewInt(int64(n)))
				hex := fmt.Sprintf("0x%016x", exact)
				mod := new(big.Int).Mod(exact, new(big.Int).Lsh(big.NewInt(1), 64)).Uint64()
				want := forms{Bound: mod, HexBound: hex, Hex: hex, After: hex, First: mod}
				got := forms{Bound: Bound(i, n), HexBound: HexBound(i, n), Hex: hex, After: hex, First: mod}
				if i < n {
					got.Hex, got.First = Hex(Bound(i, n)), Range{Index: i, Count: n}.First()
				}
				if i > 0 {
					got.After = HexAfter(Range{Index: i - 1, Count: n}.Last())
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("bounds (-want +got):\n%s", diff)
				}
			})
		}
	}
}

// TestRangesTileTheHashSpace checks, for several counts, that the ranges
// of a count, by their first and last hashes, tile [0, 2^64): the first
// starts at 0, each starts one past the last hash of the one before, none
// is empty, and the last ends at 2^64-1.
func TestRangesTileTheHashSpace(t *testing.T) {
	for _, n := range []int{1, 2, 3, 7, 64, 1000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			var wrong []string
			next := uint64(0) // the first hash of the next range
			for i := range n {
				r := Range{Index: i, Count: n}
				if r.First() != next || r.Last() < r.First() {
					wrong = append(wrong, fmt.Sprintf("%v is [%#x, %#x], want it to start at %#x", r, r.First(), r.Last(), next))
				}
				next = r.Last() + 1
			}
			if diff := cmp.Diff([]string(nil), wrong); diff != "" {
				t.Errorf("ranges (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(uint64(math.MaxUint64), Range{Index: n - 1, Count: n}.Last()); diff != "" {
				t.Errorf("last hash of the last range (-want +got):\n%s", diff)
			}
		})
	}
}

// TestWidenAndNarrow runs sequences of steps on a State of shard 0/2 and
// checks the selection after each (as "index/count" ranges, in order) and
// whether its generation moved: Widen refuses a second range, WidenAlso
// adds it, Narrow leaves one.
func TestWidenAndNarrow(t *testing.T) {
	type step struct {
		op    string // "widen", "also", "narrow"
		r     Range
		ok    bool
		after []string
		moved bool
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"widen then narrow", []step{
			{"widen", Range{0, 3}, true, []string{"0/2", "0/3"}, true},
			{"widen", Range{0, 3}, true, []string{"0/2", "0/3"}, false},
			{"narrow", Range{0, 3}, true, []string{"0/3"}, true},
		}},
		{"widen to another during a widening", []step{
			{"widen", Range{0, 3}, true, []string{"0/2", "0/3"}, true},
			{"widen", Range{1, 4}, false, []string{"0/2", "0/3"}, false},
		}},
		{"widen also, twice, then narrow", []step{
			{"also", Range{0, 3}, true, []string{"0/2", "0/3"}, true},
			{"also", Range{1, 4}, true, []string{"0/2", "0/3", "1/4"}, true},
			{"also", Range{0, 2}, true, []string{"0/2", "0/3", "1/4"}, false},
			{"narrow", Range{1, 4}, true, []string{"1/4"}, true},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := New(Range{0, 2})
			for i, st := range tc.steps {
				_, before, _ := s.Selection("object.metadata.uid")
				var err error
				switch st.op {
				case "widen":
					_, err = s.Widen(st.r)
				case "also":
					s.WidenAlso(st.r)
				case "narrow":
					s.Narrow(st.r)
				}
				selector, after, _ := s.Selection("object.metadata.uid")
				var got []string
				for _, req := range selector.Requirements() {
					got = append(got, rangeOf(t, req).String())
				}
				if diff := cmp.Diff(st.after, got); diff != "" || (err == nil) != st.ok || (after != before) != st.moved {
					t.Errorf("step %d (%s %v): error %v (want ok %v), generation moved %v (want %v), selection (-want +got):\n%s", i, st.op, st.r, err, st.ok, after != before, st.moved, diff)
				}
			}
		})
	}
}

// rangeOf finds the Range of count up to 4 whose requirement req is.
func rangeOf(t *testing.T, req sharding.ShardRangeRequirement) Range {
	t.Helper()
	for n := 1; n <= 4; n++ {
		for i := range n {
			if r := (Range{i, n}).requirement(req.Key); r.Start == req.Start && r.End == req.End {
				return Range{i, n}
			}
		}
	}
	t.Fatalf("no range of %v", req)
	return Range{}
}
