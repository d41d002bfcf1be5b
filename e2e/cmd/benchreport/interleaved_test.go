package main

import (
	"os"
	"strings"
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
			want: pairedRatio{value: 1.1, min: 0.5, max: 3, a: 2.2e6, b: 2e6, runs: 3},
		},
		{
			name:  "the control: median of 1, 1 and 1.5 is 1, where the medians give 1.5",
			bench: interleavedName("List", "cold"), a: "client-go", b: "generic-typed",
			want: pairedRatio{value: 1, min: 1, max: 1.5, a: 3e6, b: 2e6, runs: 3},
		},
		{
			name: "one run", bench: interleavedName("NamespaceList", "warm"),
			a: "generic-unstructured", b: "generic-typed",
			want: pairedRatio{value: 1.5, min: 1.5, max: 1.5, a: 75000, b: 50000, runs: 1},
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

// TestReadTargets judges issue 12's read targets on testdata/targets.txt
// (made-up results): List's warm ratios straddle 1.5x (1.4x to 1.7x,
// median 1.6x), Namespace(ns).List's cold ones all exceed it. And no other
// target reads BenchmarkReadInterleaved's results as sub-benchmarks: they
// have no contenders, and "within 5% of client-go" would find 0 ns within
// 5% of 0 ns.
func TestReadTargets(t *testing.T) {
	output, err := os.ReadFile("testdata/targets.txt")
	if err != nil {
		t.Fatal(err)
	}
	r := &report{results: map[string][]result{"reads": parse(output)}}
	type row struct{ name, verdict string }
	var got []row
	for _, target := range r.unstructuredTargets()[:2] {
		got = append(got, row{target.name, target.verdict})
	}
	want := []row{
		{"ReadList with a label selector: unstructured ≤ 1.5× typed's time (interleaved, CPU cache cold and warm), ≤ 2× its allocations", inconclusive},
		{"ReadNamespaceList with a label selector: unstructured ≤ 1.5× typed's time (interleaved, CPU cache cold and warm), ≤ 2× its allocations", missed},
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(row{})); diff != "" {
		t.Errorf("read targets (-want +got):\n%s", diff)
	}
	for _, line := range strings.Split(r.targets(), "\n") {
		if strings.HasPrefix(line, "| ReadInterleaved") {
			t.Errorf("a target of BenchmarkReadInterleaved's results as sub-benchmarks: %s", line)
		}
	}
}

func TestReadVerdict(t *testing.T) {
	twice := measuredRatio{value: 1, a: 12, b: 12}
	tests := []struct {
		name        string
		cold, warm  string
		allocs      measuredRatio
		wantVerdict string
	}{
		{"both met", met, met, twice, met},
		{"one inconclusive", met, inconclusive, twice, inconclusive},
		{"one missed", inconclusive, missed, twice, missed},
		{"allocations over 2x", met, met, measuredRatio{value: 2.5, a: 30, b: 12}, missed},
		{"a time not measured", notMeasured, met, twice, notMeasured},
		{"allocations not measured", met, met, measuredRatio{}, notMeasured},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.wantVerdict, readVerdict(tc.cold, tc.warm, tc.allocs)); diff != "" {
				t.Errorf("readVerdict (-want +got):\n%s", diff)
			}
		})
	}
}

// TestMeasuredRatioVerdict: the sync targets' verdicts, as within judges
// the other targets (in the report of a5e1e99, Widgets' unstructured sync
// at 1.18x typed with p=0.132 was called missed).
func TestMeasuredRatioVerdict(t *testing.T) {
	tests := []struct {
		name  string
		ratio measuredRatio
		want  string
	}{
		{"within the limit", measuredRatio{value: 1.05, a: 105, b: 100, p: 0.002}, met},
		{"over, the samples differ", measuredRatio{value: 1.18, a: 118, b: 100, p: 0.002}, missed},
		{"over, the samples do not differ", measuredRatio{value: 1.18, a: 118, b: 100, p: 0.132}, inconclusive},
		{"no baseline", measuredRatio{}, notMeasured},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.ratio.verdict(1.1)); diff != "" {
				t.Errorf("verdict(1.1) (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSyncTargets judges issue 12's sync targets on
// testdata/sync_targets.txt (made-up BenchmarkSyncInterleaved results):
// ConfigMaps with WatchList at 1.5x, 2.5x and 1.5x typed's time (median
// 1.5x, within 2x); not measured without it; Widgets at 1.0x to 1.3x
// (median 1.2x: over 1.1x, one run within it) and at 1.15x to 1.25x (every
// run over).
func TestSyncTargets(t *testing.T) {
	output, err := os.ReadFile("testdata/sync_targets.txt")
	if err != nil {
		t.Fatal(err)
	}
	r := &report{results: map[string][]result{"syncinterleaved": parse(output)}}
	type row struct{ name, verdict string }
	var got []row
	for _, target := range r.unstructuredTargets()[2:6] {
		got = append(got, row{target.name, target.verdict})
	}
	want := []row{
		{"SyncInterleaved/resource=configmaps/watchlist=on: unstructured sync ≤ 2× typed (built-in kind, typed from protobuf)", met},
		{"SyncInterleaved/resource=configmaps/watchlist=off: unstructured sync ≤ 2× typed (built-in kind, typed from protobuf)", notMeasured},
		{"SyncInterleaved/resource=widgets/watchlist=on: unstructured sync ≤ 1.1× typed (CRD, both from JSON)", inconclusive},
		{"SyncInterleaved/resource=widgets/watchlist=off: unstructured sync ≤ 1.1× typed (CRD, both from JSON)", missed},
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(row{})); diff != "" {
		t.Errorf("sync targets (-want +got):\n%s", diff)
	}
}

// TestOlderTargetsJudgedInterleaved judges the targets of the generic
// Lister and of the sync against client-go on testdata/older_targets.txt
// and testdata/older_sync_interleaved.txt (made-up results). Where the
// contenders also ran interleaved, the interleaved runs decide, whatever
// the sequential ones say:
//
//   - ReadList: 1.5x client-go's time one after the other, 1.0x
//     interleaved (met);
//   - ReadNamespaceList: its warm runs all over 1.05x (missed);
//   - ReadGet, not interleaved: its sequential verdict (1.2x, one run
//     each: inconclusive);
//   - typed ConfigMaps sync: 1.5x one after the other, 1.025x
//     interleaved (met);
//   - typed Widgets: 1.0x one after the other, 1.15x and 1.2x
//     interleaved (missed);
//   - the drop-in's ConfigMaps: runs of 1.0x to 1.2x, median 1.05x (met);
//   - the drop-in's Widgets: no interleaved runs, judged one after the
//     other (1.0x, met).
func TestOlderTargetsJudgedInterleaved(t *testing.T) {
	var results [2][]result
	for i, file := range []string{"testdata/older_targets.txt", "testdata/older_sync_interleaved.txt"} {
		output, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		results[i] = parse(output)
	}
	r := &report{results: map[string][]result{
		"reads": results[0], "sync": results[0],
		"syncinterleaved": results[1], "syncinterleaveddropin": results[1],
	}}
	want := map[string]string{
		"ReadList: within 5% of client-go's generated lister, no more allocations":                           met,
		"ReadNamespaceList: within 5% of client-go's generated lister, no more allocations":                  missed,
		"ReadGet: within 5% of client-go's generated lister, no more allocations":                            inconclusive,
		"Sync/resource=configmaps/watchlist=on: generic-typed within 10% of client-go-typed":                 met,
		"Sync/resource=configmaps/watchlist=on: generic-unstructured-dropin within 10% of client-go-dynamic": met,
		"Sync/resource=widgets/watchlist=on: generic-typed within 10% of client-go-typed":                    missed,
		"Sync/resource=widgets/watchlist=on: generic-unstructured-dropin within 10% of client-go-dynamic":    met,
	}
	got := map[string]string{}
	for _, line := range strings.Split(r.targets(), "\n") {
		cells := strings.Split(line, " | ")
		if len(cells) != 3 {
			continue
		}
		name := strings.TrimPrefix(cells[0], "| ")
		if _, ok := want[name]; ok {
			got[name] = strings.TrimSuffix(cells[2], " |")
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("verdicts (-want +got):\n%s", diff)
	}
}

func TestWorst(t *testing.T) {
	tests := []struct {
		verdicts []string
		want     string
	}{
		{[]string{met, met}, met},
		{[]string{met, inconclusive}, inconclusive},
		{[]string{inconclusive, missed, met}, missed},
		{[]string{missed, notMeasured}, notMeasured},
		{nil, met},
	}
	for _, tc := range tests {
		if diff := cmp.Diff(tc.want, worst(tc.verdicts...)); diff != "" {
			t.Errorf("worst(%q) (-want +got):\n%s", tc.verdicts, diff)
		}
	}
}
