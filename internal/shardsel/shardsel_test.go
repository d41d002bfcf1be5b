package shardsel

import (
	"fmt"
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
			if diff := cmp.Diff([2]string{"0x0000000000000000", "0x10000000000000000"}, [2]string{Bound(0, count), Bound(count, count)}); diff != "" {
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
