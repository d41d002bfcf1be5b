package main

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestCacheSizeRows renders the cache-size tables from made-up runs
// (testdata/cachesize.txt, two runs of each contender, at the figures of
// docs/performance.md): per resource, every contender in the benchmark's
// order, each column the median of the runs, the ratios to
// client-go-typed's; ns/op, the child's whole run, shown nowhere.
func TestCacheSizeRows(t *testing.T) {
	r := &report{objects: 10000, results: map[string][]result{"cachesize": parseFile(t, "testdata/cachesize.txt")}}
	var b bytes.Buffer
	r.cacheSizeSection(func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }, &b)
	want := []string{
		"| client-go-typed | 31310 | 1.00× | 4.35 s | 1.00× |",
		"| generic-typed | 15179 | 0.48× | 3.30 s | 0.76× |",
		"| generic-typed-nosharing | 28624 | 0.91× | 4.41 s | 1.01× |",
		"| generic-unstructured | 54493 | 1.74× | 9.97 s | 2.29× |",
		"| generic-metadata | 7313 | 0.23× | 1.06 s | 0.24× |",
		"| client-go-dynamic | 102410 | 3.27× | 16.20 s | 3.72× |",
		"| generic-unstructured-dropin | 102370 | 3.27× | 16.00 s | 3.68× |",
		"| client-go-typed | 3560 | 1.00× | 420.0 ms | 1.00× |",
		"| generic-typed | 3105 | 0.87× | 430.0 ms | 1.02× |",
		"| generic-typed-nosharing | 3562 | 1.00× | 380.0 ms | 0.90× |",
		"| generic-unstructured | 3855 | 1.08× | 600.0 ms | 1.43× |",
		"| generic-metadata | 1189 | 0.33× | 200.0 ms | 0.48× |",
		"| client-go-dynamic | 6222 | 1.75× | 800.0 ms | 1.90× |",
		"| generic-unstructured-dropin | 6206 | 1.74× | 780.0 ms | 1.86× |",
	}
	if diff := cmp.Diff(want, tableRows(b.String())); diff != "" {
		t.Errorf("cache-size rows (-want +got):\n%s", diff)
	}
	for _, s := range []string{"### Realistic Pods\n", "### ConfigMaps with payloads of their own\n", "The median of 2 runs", "200 Deployments", "profiles/typed-cache-accounting.md"} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("the section has no %q:\n%s", s, b.String())
		}
	}
}

// TestCacheSizeNotMeasured: a run without BenchmarkCacheSize says so, and
// its targets are not measured.
func TestCacheSizeNotMeasured(t *testing.T) {
	r := &report{results: map[string][]result{}}
	var b bytes.Buffer
	r.cacheSizeSection(func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }, &b)
	if got, want := b.String(), "## Cache size\n\nNot measured in this run.\n\n"; got != want {
		t.Errorf("section = %q, want %q", got, want)
	}
	for _, target := range r.cacheSizeTargets() {
		if target.verdict != notMeasured {
			t.Errorf("%s: %s, want %s", target.name, target.verdict, notMeasured)
		}
	}
}

// TestFewRunsVerdict judges "generic-typed at most 0.7 times
// client-go-typed's B/object" on made-up runs: with fewer runs than
// benchstat's test needs to tell two samples apart (4 each), on the ratio
// of medians alone; with more, as the other targets are.
func TestFewRunsVerdict(t *testing.T) {
	tests := []struct {
		name                   string
		typed, clientGo        []float64
		wantVerdict, wantShown string
	}{
		{"one run, within", []float64{15000}, []float64{31000}, met, "0.48× (14.65 KiB vs 30.27 KiB; one run each, too few for a p-value)"},
		{"one run, over", []float64{25000}, []float64{31000}, missed, "0.81× (24.41 KiB vs 30.27 KiB; one run each, too few for a p-value)"},
		{"two runs, over", []float64{24000, 26000}, []float64{30000, 32000}, missed, "0.81× (24.41 KiB vs 30.27 KiB; 2 runs each, too few for a p-value)"},
		{"six runs, over, apart", []float64{25000, 25100, 24900, 25050, 24950, 25000}, []float64{31000, 31100, 30900, 31050, 30950, 31000}, missed, "0.81× (24.41 KiB vs 30.27 KiB; p=0.002)"},
		{"six runs, over, within the noise", []float64{22000, 30000, 21000, 31000, 22000, 30000}, []float64{31000, 21000, 32000, 30000, 22000, 31000}, inconclusive, "0.85× (25.39 KiB vs 29.79 KiB; p=0.446)"},
		{"client-go not measured", []float64{15000}, nil, notMeasured, "0.00× (14.65 KiB vs 0 B; p=1.000)"},
		{"generic-typed not measured", nil, []float64{31000}, notMeasured, "0.00× (0 B vs 30.27 KiB; p=1.000)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out strings.Builder
			for c, values := range map[string][]float64{"generic-typed": tc.typed, "client-go-typed": tc.clientGo} {
				for _, v := range values {
					fmt.Fprintf(&out, "BenchmarkCacheSize/resource=pods/contender=%s-2 \t 1\t 5000000000 ns/op\t %.0f B/object\t 3000000000 alone-ns/op\n", c, v)
				}
			}
			ratio := ratioOf(parse([]byte(out.String())), cacheSizeBench+"pods", "generic-typed", "client-go-typed", "B/object")
			verdict, shown := fewRunsVerdict(ratio, 0.7)
			if diff := cmp.Diff([]string{tc.wantVerdict, tc.wantShown}, []string{verdict, shown}); diff != "" {
				t.Errorf("verdict, measured (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCanTell: benchstat's test finds no two samples of fewer than 4 runs
// each different (its smallest p-value at 3 runs each is 0.1).
func TestCanTell(t *testing.T) {
	for n, want := range map[int]bool{0: false, 1: false, 2: false, 3: false, 4: true, 6: true} {
		if got := canTell(n); got != want {
			t.Errorf("canTell(%d) = %v, want %v", n, got, want)
		}
	}
}

// TestGroupCount: BenchmarkCacheSize runs at most cacheSizeMaxCount times,
// the other groups as many times as -count says.
func TestGroupCount(t *testing.T) {
	counts := map[string]int{}
	for _, g := range groups {
		counts[g.name] = g.count(6)
	}
	if counts["cachesize"] != cacheSizeMaxCount || counts["reads"] != 6 {
		t.Errorf("-count 6: cachesize runs %d times, reads %d; want %d and 6", counts["cachesize"], counts["reads"], cacheSizeMaxCount)
	}
	if got := (group{maxCount: 2}).count(1); got != 1 {
		t.Errorf("-count 1, at most 2: %d runs, want 1", got)
	}
}
