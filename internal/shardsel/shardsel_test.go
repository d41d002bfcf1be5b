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
