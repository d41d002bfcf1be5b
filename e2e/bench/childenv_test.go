package bench

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestChildEnviron: a child gets BENCH_CHILD_GOMEMLIMIT as its GOMEMLIMIT
// when it is set, and the benchmark process's environment as it is when it
// is not.
func TestChildEnviron(t *testing.T) {
	for _, tc := range []struct {
		name      string
		environ   []string
		wantChild []string
	}{
		{"no child limit", []string{"A=1", "GOMEMLIMIT=11GiB"}, []string{"A=1", "GOMEMLIMIT=11GiB"}},
		{"child limit replaces", []string{"GOMEMLIMIT=11GiB", "A=1", "BENCH_CHILD_GOMEMLIMIT=8GiB"}, []string{"A=1", "BENCH_CHILD_GOMEMLIMIT=8GiB", "GOMEMLIMIT=8GiB"}},
		{"child limit alone", []string{"BENCH_CHILD_GOMEMLIMIT=8GiB"}, []string{"BENCH_CHILD_GOMEMLIMIT=8GiB", "GOMEMLIMIT=8GiB"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.wantChild, childEnviron(tc.environ)); diff != "" {
				t.Errorf("child environment (-want +got):\n%s", diff)
			}
		})
	}
}
