package main

import (
	"fmt"
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
	results := parseFile(t, "testdata/interleaved.txt")
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

// parseFile parses the benchmark output in file, a fixture of testdata/.
func parseFile(t *testing.T, file string) []result {
	t.Helper()
	output, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return parse(output)
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

// TestTargetVerdicts judges the targets on made-up results in testdata/,
// each file given as the output of the report's group of benchmarks.
func TestTargetVerdicts(t *testing.T) {
	const (
		readList        = "ReadList with a label selector: unstructured ≤ 1.5× typed's time (interleaved, CPU cache cold and warm), ≤ 2× its allocations"
		readNSList      = "ReadNamespaceList with a label selector: unstructured ≤ 1.5× typed's time (interleaved, CPU cache cold and warm), ≤ 2× its allocations"
		syncConfigMaps  = "SyncInterleaved/resource=configmaps/watchlist=%s: unstructured sync ≤ 2× typed (built-in kind, typed from protobuf)"
		syncWidgets     = "SyncInterleaved/resource=widgets/watchlist=%s: unstructured sync ≤ 1.1× typed (CRD, both from JSON)"
		withinGenerated = "%s: within 5%% of client-go's generated lister, no more allocations"
		withinClientGo  = "Sync/resource=%s/watchlist=on: %s within 10%% of %s"
		dropInList      = "ReadList with a label selector: drop-in (unstructured over the dynamic client's objects) ≤ 1.5× typed's time (interleaved, CPU cache cold and warm)"
		dropInNSList    = "ReadNamespaceList with a label selector: drop-in (unstructured over the dynamic client's objects) ≤ 1.5× typed's time (interleaved, CPU cache cold and warm)"
		cacheSize       = "Cache size (%s): generic-typed ≤ %s× client-go-typed B/object"
		initialSync     = "Initial sync (%s): generic-typed ≤ 1.1× generic-typed-nosharing alone-ns/op"
		dropInHeap      = "Drop-in heap (%s): generic-unstructured-dropin ≤ 1.25× client-go-typed B/object"
		pods, cms       = "realistic Pods", "ConfigMaps, payloads of their own"
	)
	tests := []struct {
		name  string
		files map[string]string // group -> file of testdata
		want  map[string]string // target -> verdict
	}{
		{
			// List's warm ratios straddle 1.5x (1.4x to 1.7x, median
			// 1.6x); Namespace(ns).List's cold ones all exceed it.
			name:  "issue 12's reads",
			files: map[string]string{"reads": "targets.txt"},
			want:  map[string]string{readList: inconclusive, readNSList: missed},
		},
		{
			// ConfigMaps with WatchList at 1.5x, 2.5x and 1.5x typed's
			// time (median 1.5x, within 2x); not measured without it;
			// Widgets at 1.0x to 1.3x (median 1.2x: over 1.1x, one run
			// within it) and at 1.15x to 1.25x (every run over).
			name:  "issue 12's syncs",
			files: map[string]string{"syncinterleaved": "sync_targets.txt"},
			want: map[string]string{
				fmt.Sprintf(syncConfigMaps, "on"): met, fmt.Sprintf(syncConfigMaps, "off"): notMeasured,
				fmt.Sprintf(syncWidgets, "on"): inconclusive, fmt.Sprintf(syncWidgets, "off"): missed,
			},
		},
		{
			// Where the contenders also ran interleaved, the interleaved
			// runs decide, whatever the sequential ones say: ReadList is
			// 1.5x client-go's time one after the other, 1.0x interleaved
			// (met); ReadNamespaceList's warm runs are all over 1.05x
			// (missed); ReadGet, not interleaved, keeps its sequential
			// verdict (1.2x, one run each: inconclusive). The typed
			// ConfigMaps sync is 1.5x one after the other, 1.025x
			// interleaved (met); typed Widgets 1.0x one after the other,
			// 1.15x and 1.2x interleaved (missed); the drop-in's
			// ConfigMaps runs 1.0x to 1.2x, median 1.05x (met); its
			// Widgets, with no interleaved runs, are judged one after the
			// other (1.0x, met). ReadByIndex is 1.29x one after the other
			// (two runs each: inconclusive), 1.01x cold and 0.95x warm
			// interleaved (met).
			name: "targets against client-go, judged interleaved",
			files: map[string]string{
				"reads": "older_targets.txt", "sync": "older_targets.txt",
				"syncinterleaved": "older_sync_interleaved.txt", "syncinterleaveddropin": "older_sync_interleaved.txt",
			},
			want: map[string]string{
				fmt.Sprintf(withinGenerated, "ReadList"):                                                      met,
				fmt.Sprintf(withinGenerated, "ReadNamespaceList"):                                             missed,
				fmt.Sprintf(withinGenerated, "ReadGet"):                                                       inconclusive,
				fmt.Sprintf(withinGenerated, "ReadByIndex"):                                                   met,
				fmt.Sprintf(withinClientGo, "configmaps", "generic-typed", "client-go-typed"):                 met,
				fmt.Sprintf(withinClientGo, "configmaps", "generic-unstructured-dropin", "client-go-dynamic"): met,
				fmt.Sprintf(withinClientGo, "widgets", "generic-typed", "client-go-typed"):                    missed,
				fmt.Sprintf(withinClientGo, "widgets", "generic-unstructured-dropin", "client-go-dynamic"):    met,
			},
		},
		{
			// Get is 1.49x client-go's time one after the other (two runs
			// each: inconclusive) and 0.90x cold, 0.92x warm interleaved
			// (met).
			name:  "Get, judged interleaved",
			files: map[string]string{"reads": "get_interleaved.txt"},
			want:  map[string]string{fmt.Sprintf(withinGenerated, "ReadGet"): met},
		},
		{
			// A fourth contender, the drop-in, in the interleaved runs:
			// its List at 1.0x to 1.2x typed's time cold and 1.2x to 1.6x
			// warm (median 1.3x: met); its Namespace(ns).List at 1.6x to
			// 1.8x warm (missed). generic-unstructured's targets read its
			// own times, the other way round: List at 1.6x to 1.8x cold
			// (missed), Namespace(ns).List at 1.2x to 1.4x (met).
			name:  "the drop-in's reads, beside unstructured's",
			files: map[string]string{"reads": "dropin_interleaved.txt"},
			want:  map[string]string{dropInList: met, dropInNSList: missed, readList: missed, readNSList: met},
		},
		{
			// Runs from before the drop-in read interleaved.
			name:  "the drop-in's reads, not measured",
			files: map[string]string{"reads": "targets.txt"},
			want:  map[string]string{dropInList: notMeasured, dropInNSList: notMeasured},
		},
		{
			// Two runs each, too few for benchstat's test: on the ratios
			// alone. Pods 0.48x client-go's heap (met), ConfigMaps 0.87x
			// (met); sync 0.75x NoSharing's for Pods (met), 1.13x for
			// ConfigMaps (missed); the drop-in's heap 3.27x and 1.74x
			// client-go's typed one (missed).
			name:  "cache size",
			files: map[string]string{"cachesize": "cachesize.txt"},
			want: map[string]string{
				fmt.Sprintf(cacheSize, pods, "0.7"): met, fmt.Sprintf(cacheSize, cms, "0.9"): met,
				fmt.Sprintf(initialSync, pods): met, fmt.Sprintf(initialSync, cms): missed,
				fmt.Sprintf(dropInHeap, pods): missed, fmt.Sprintf(dropInHeap, cms): missed,
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := &report{results: map[string][]result{}}
			for group, file := range tc.files {
				r.results[group] = parseFile(t, "testdata/"+file)
			}
			if diff := cmp.Diff(tc.want, verdictsOf(r.targetList(), tc.want)); diff != "" {
				t.Errorf("verdicts (-want +got):\n%s", diff)
			}
		})
	}
}

// TestInterleavedReadsAreNoSequentialTargets: no target reads
// BenchmarkReadInterleaved's results as sub-benchmarks: they have no
// contenders, and "within 5% of client-go" would find 0 ns within 5% of
// 0 ns.
func TestInterleavedReadsAreNoSequentialTargets(t *testing.T) {
	r := &report{results: map[string][]result{"reads": parseFile(t, "testdata/targets.txt")}}
	for _, target := range r.targetList() {
		if strings.HasPrefix(target.name, "ReadInterleaved") {
			t.Errorf("a target of BenchmarkReadInterleaved's results as sub-benchmarks: %s", target.name)
		}
	}
}

// verdictsOf returns the verdicts of the targets of ts named in want, by
// name.
func verdictsOf(ts []target, want map[string]string) map[string]string {
	got := map[string]string{}
	for _, target := range ts {
		if _, ok := want[target.name]; ok {
			got[target.name] = target.verdict
		}
	}
	return got
}

// TestReadVerdicts judges the ReadList targets of the drop-in (≤ 1.5×)
// and of the cache that shares what repeats (≤ 1.1×) on made-up
// interleaved runs: the contender's time over typed's in each run, cold
// and warm; the worse of the two verdicts is the target's.
func TestReadVerdicts(t *testing.T) {
	dropIn := func(r *report) target { return r.dropInReadTargets()[0] }
	shared := func(r *report) target { return r.sharedReadTargets()[0] }
	tests := []struct {
		name       string
		contender  string
		target     func(*report) target
		cold, warm []float64
		want       string
	}{
		{"drop-in: both within", "generic-unstructured-dropin", dropIn, []float64{1.0, 1.1, 1.2}, []float64{1.2, 1.3, 1.4}, met},
		{"drop-in: warm straddles the limit", "generic-unstructured-dropin", dropIn, []float64{1.0, 1.1, 1.2}, []float64{1.4, 1.6, 1.7}, inconclusive},
		{"drop-in: warm all over", "generic-unstructured-dropin", dropIn, []float64{1.0, 1.1, 1.2}, []float64{1.6, 1.7, 1.8}, missed},
		{"drop-in: no warm runs", "generic-unstructured-dropin", dropIn, []float64{1.0, 1.1, 1.2}, nil, notMeasured},
		{"shared: both within", "generic-typed-shared", shared, []float64{0.9, 1.0, 1.05}, []float64{0.95, 1.0, 1.1}, met},
		{"shared: cold straddles the limit", "generic-typed-shared", shared, []float64{1.0, 1.2, 1.3}, []float64{1.0, 1.0, 1.0}, inconclusive},
		{"shared: warm all over", "generic-typed-shared", shared, []float64{1.0, 1.0, 1.0}, []float64{1.2, 1.3, 1.4}, missed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out strings.Builder
			for cache, ratios := range map[string][]float64{"cold": tc.cold, "warm": tc.warm} {
				for _, ratio := range ratios {
					fmt.Fprintf(&out, "BenchmarkReadInterleaved/read=List/cpucache=%s-2 \t 33\t 1 ns/op\t 1000000 client-go-ns/op\t 1000000 generic-typed-ns/op\t 1000000 generic-unstructured-ns/op\t %.0f %s-ns/op\n", cache, ratio*1e6, tc.contender)
				}
			}
			r := &report{results: map[string][]result{"reads": parse([]byte(out.String()))}}
			if got := tc.target(r); got.verdict != tc.want {
				t.Errorf("%s: %s, want %s (%s)", got.name, got.verdict, tc.want, got.measured)
			}
		})
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
