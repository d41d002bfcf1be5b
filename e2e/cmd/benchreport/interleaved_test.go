package main

import (
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestPairedRatioOf reads testdata/interleaved.txt, BenchmarkReadInterleaved
// output with made-up times. The ratio is the median of the ratios within
// each run, not the ratio of the medians: the control's runs (1x, 1x and
// 1.5x) give 1x, where its medians (3 vs 2 ms) would give 1.5x.
func TestPairedRatioOf(t *testing.T) {
	output, err := os.ReadFile("testdata/interleaved.txt")
	if err != nil {
		t.Fatal(err)
	}
	results := parse(output)
	tests := []struct {
		name, bench, a, b string
		want              pairedRatio
	}{
		{
			name: "unstructured over typed", bench: interleavedName("List", "cold"),
			a: "generic-unstructured", b: "generic-typed",
			want: pairedRatio{value: 1.1, a: 2.2e6, b: 2e6, runs: 3},
		},
		{
			name:  "the control: median of 1, 1 and 1.5 is 1, where the medians give 1.5",
			bench: interleavedName("List", "cold"), a: "client-go", b: "generic-typed",
			want: pairedRatio{value: 1, a: 3e6, b: 2e6, runs: 3},
		},
		{
			name: "one run", bench: interleavedName("NamespaceList", "warm"),
			a: "generic-unstructured", b: "generic-typed",
			want: pairedRatio{value: 1.5, a: 75000, b: 50000, runs: 1},
		},
		{
			name: "no such bench", bench: interleavedName("NamespaceList", "cold"),
			a: "generic-unstructured", b: "generic-typed",
			want: pairedRatio{},
		},
		{
			name: "not an interleaved bench: its contenders are sub-benchmarks", bench: "ReadList",
			a: "generic-unstructured", b: "generic-typed",
			want: pairedRatio{},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := pairedRatioOf(results, tc.bench, tc.a, tc.b)
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(pairedRatio{}), cmpApprox); diff != "" {
				t.Errorf("pairedRatioOf(%s, %s, %s) (-want +got):\n%s", tc.bench, tc.a, tc.b, diff)
			}
		})
	}
}

// cmpApprox compares float64s to a part in a million: the ratios are
// quotients.
var cmpApprox = cmp.Comparer(func(x, y float64) bool {
	if x == y {
		return true
	}
	d := x - y
	if d < 0 {
		d = -d
	}
	return d <= 1e-6*max(x, y, -x, -y)
})
