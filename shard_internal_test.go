package generic

import (
	"fmt"
	"strings"
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
			if diff := cmp.Diff([2]string{"0x0000000000000000", "0x10000000000000000"}, [2]string{bound(0, count), bound(count, count)}); diff != "" {
				t.Errorf("first and last bounds (-want +got):\n%s", diff)
			}
			for i := range count {
				r := Shard{Index: i, Count: count}.requirement(ShardByUID)
				if !sharding.HexLess(r.Start, r.End) {
					t.Errorf("range %d is empty: [%s, %s)", i, r.Start, r.End)
				}
				if next := (Shard{Index: i + 1, Count: count}); i+1 < count && next.requirement(ShardByUID).Start != r.End {
					t.Errorf("range %d ends at %s, range %d starts at %s", i, r.End, i+1, next.requirement(ShardByUID).Start)
				}
				if len(r.Start) != 18 || (len(r.End) != 18 && r.End != "0x10000000000000000") {
					t.Errorf("range %d is not written in 16 hex digits: [%s, %s)", i, r.Start, r.End)
				}
			}
		})
	}
}

func TestParseShard(t *testing.T) {
	tests := []struct {
		in      string
		want    Shard
		wantErr string
	}{
		{"0/1", Shard{0, 1}, ""},
		{"1/3", Shard{1, 3}, ""},
		{"3/3", Shard{}, "invalid shard 3/3"},
		{"-1/2", Shard{}, "invalid shard -1/2"},
		{"1/0", Shard{}, "count must be at least 1"},
		{"1", Shard{}, "want index/count"},
		{"1/3x", Shard{}, "want index/count"},
		{"", Shard{}, "want index/count"},
		{"a/b", Shard{}, "want index/count"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseShard(tt.in)
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && !strings.Contains(gotErr, tt.wantErr) {
				t.Fatalf("ParseShard(%q) error = %v, want one containing %q", tt.in, err, tt.wantErr)
			}
			if err == nil {
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("ParseShard(%q) (-want +got):\n%s", tt.in, diff)
				}
			}
		})
	}
}
