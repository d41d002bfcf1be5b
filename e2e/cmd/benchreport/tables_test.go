package main

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestScalingRows renders the scaling table from made-up runs at two
// sizes (testdata/scaling_<size>.txt, three runs each): every column is
// the median of the runs, per object where it says so, and the
// allocations are the child's (alone-allocs/op), not the benchmark
// process's, which count the API server's too.
func TestScalingRows(t *testing.T) {
	tests := []struct {
		name  string
		sizes map[int]string // size -> file of testdata
		want  []string
	}{
		{
			// At 100,000 one run made half again as many allocations,
			// in the child as with the server; the median leaves it out.
			name:  "two sizes",
			sizes: map[int]string{1000: "scaling_1000.txt", 100000: "scaling_100000.txt"},
			want: []string{
				"| generic-unstructured | 1000 | 40.0 ms | 40.00 µs | 80.0 ms | 80.00 µs | 60.0 | 4.00 KiB |",
				"| generic-unstructured | 100000 | 8.00 s | 80.00 µs | 9.00 s | 90.00 µs | 60.0 | 3.00 KiB |",
			},
		},
		{
			// A run from before the child counted its allocations: none
			// to show, and the process's allocs/op not shown instead.
			name:  "no allocations alone",
			sizes: map[int]string{1000: "scaling_before_alone_allocs.txt"},
			want: []string{
				"| generic-unstructured | 1000 | 40.0 ms | 40.00 µs | 80.0 ms | 80.00 µs | — | 4.00 KiB |",
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := &report{results: map[string][]result{}}
			for _, size := range []int{1000, 10000, 100000} {
				if file, ok := tc.sizes[size]; ok {
					r.scaling = append(r.scaling, size)
					r.results["scaling-"+strconv.Itoa(size)] = parseFile(t, "testdata/"+file)
				}
			}
			var b bytes.Buffer
			r.scalingSection(func(string, ...any) {}, &b)
			if diff := cmp.Diff(tc.want, tableRows(b.String())); diff != "" {
				t.Errorf("scaling rows (-want +got):\n%s", diff)
			}
		})
	}
}

// tableRows returns the rows of the markdown tables in s, without their
// header and separator lines.
func tableRows(s string) []string {
	lines := strings.Split(s, "\n")
	var rows []string
	for i, line := range lines {
		header := i+1 < len(lines) && strings.HasPrefix(lines[i+1], "|---")
		if strings.HasPrefix(line, "| ") && !header {
			rows = append(rows, line)
		}
	}
	return rows
}

// TestInterleavedTableRows renders BenchmarkReadInterleaved's table from
// made-up runs in testdata/: a row for every read and CPU cache state
// measured, Get and ByIndex included, and none for those that were not;
// the drop-in's columns where it was measured.
func TestInterleavedTableRows(t *testing.T) {
	const (
		header       = "| read | CPU cache | generic-typed | generic-unstructured | client-go | unstructured / typed (range) | control: client-go / typed (range) |\n|---|---|---:|---:|---:|---:|---:|\n"
		dropInHeader = "| read | CPU cache | generic-typed | generic-unstructured | client-go | unstructured / typed (range) | control: client-go / typed (range) | generic-unstructured-dropin | generic-unstructured-dropin / typed (range) |\n|---|---|---:|---:|---:|---:|---:|---:|---:|\n"
	)
	tests := []struct {
		file, header string
		want         []string
	}{
		{"older_targets.txt", header, []string{
			"| List | cold | 1.0 ms | 1.2 ms | 1.0 ms | 1.20× (1.18–1.21) | 1.00× (0.98–1.01) |",
			"| List | warm | 1.0 ms | 1.2 ms | 1.0 ms | 1.20× (1.09–1.20) | 1.00× (0.91–1.00) |",
			"| NamespaceList | cold | 10.00 µs | 16.00 µs | 10.00 µs | 1.60× (1.60–1.60) | 1.00× (1.00–1.00) |",
			"| NamespaceList | warm | 11.50 µs | 14.00 µs | 10.00 µs | 1.22× (1.17–1.27) | 0.87× (0.83–0.91) |",
			"| ByIndex | cold | 10.10 µs | 10.00 µs | 10.00 µs | 0.99× (0.98–1.00) | 0.99× (0.98–1.00) |",
			"| ByIndex | warm | 9.50 µs | 11.00 µs | 10.00 µs | 1.16× (1.11–1.20) | 1.06× (1.00–1.11) |",
		}},
		{"get_interleaved.txt", header, []string{
			"| Get | cold | 19.00 µs | 19.00 µs | 21.00 µs | 1.00× (1.00–1.00) | 1.11× (1.10–1.11) |",
			"| Get | warm | 11.00 µs | 11.50 µs | 12.00 µs | 1.05× (1.00–1.10) | 1.10× (1.00–1.20) |",
		}},
		// A fourth contender, the drop-in: two columns more, its time and
		// its ratio to typed's, blank in a row without it; the other
		// columns as without it.
		{"dropin_interleaved.txt", dropInHeader, []string{
			"| List | cold | 1.0 ms | 1.7 ms | 1.0 ms | 1.70× (1.60–1.80) | 1.00× (1.00–1.10) | 1.1 ms | 1.10× (1.00–1.20) |",
			"| List | warm | 1.0 ms | 1.3 ms | 1.0 ms | 1.30× (1.20–1.40) | 1.00× (1.00–1.00) | 1.3 ms | 1.30× (1.20–1.60) |",
			"| NamespaceList | cold | 10.00 µs | 13.00 µs | 10.00 µs | 1.30× (1.20–1.40) | 1.00× (1.00–1.00) | 16.00 µs | 1.60× (1.40–1.70) |",
			"| NamespaceList | warm | 10.00 µs | 13.00 µs | 10.00 µs | 1.30× (1.20–1.40) | 1.00× (1.00–1.00) | 17.00 µs | 1.70× (1.60–1.80) |",
			"| ByIndex | cold | 10.00 µs | 11.00 µs | 10.00 µs | 1.10× (1.10–1.10) | 1.00× (1.00–1.00) | — | — |",
		}},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			r := &report{results: map[string][]result{"reads": parseFile(t, "testdata/"+tc.file)}}
			var b bytes.Buffer
			r.interleavedTable(&b)
			if diff := cmp.Diff(tc.want, tableRows(b.String())); diff != "" {
				t.Errorf("interleaved rows (-want +got):\n%s", diff)
			}
			if !strings.HasPrefix(b.String(), tc.header) {
				t.Errorf("interleaved table's header: got\n%s\nwant\n%s", b.String(), tc.header)
			}
		})
	}
}

// TestGrowth renders the growth table and judges its targets from made-up
// runs at 1,000 and 100,000 realistic Pods: client-go-typed is flat in
// bytes and linear in time; generic-typed holds 1.2× the bytes per object
// at 100,000 (not flat) and takes 2× the wall time per object (not
// linear) but 1.4× the client's CPU time (linear); the contenders that did
// not run are not measured.
func TestGrowth(t *testing.T) {
	r := &report{scaling: []int{1000, 100000}, results: map[string][]result{
		"growth-1000":   parseFile(t, "testdata/growth_1000.txt"),
		"growth-100000": parseFile(t, "testdata/growth_100000.txt"),
	}}
	var b bytes.Buffer
	r.growthSection(func(string, ...any) {}, &b)
	wantRows := []string{
		"| client-go-typed | 1000 | 31.25 KiB | 400.0 ms | 400.00 µs | 300.00 µs |",
		"| client-go-typed | 100000 | 30.27 KiB | 40.00 s | 400.00 µs | 300.00 µs |",
		"| generic-typed | 1000 | 15.62 KiB | 300.0 ms | 300.00 µs | 200.00 µs |",
		"| generic-typed | 100000 | 18.75 KiB | 60.00 s | 600.00 µs | 280.00 µs |",
	}
	if diff := cmp.Diff(wantRows, tableRows(b.String())); diff != "" {
		t.Errorf("growth rows (-want +got):\n%s", diff)
	}
	verdicts := map[string]string{}
	for _, target := range r.growthTargets() {
		verdicts[target.name] = target.verdict + ", " + target.measured
	}
	wantVerdicts := map[string]string{
		"Growth, realistic Pods, client-go-typed: bytes per object flat at 100000 ≤ 1.1× at 1000":                    met + ", 0.97× (one run each)",
		"Growth, realistic Pods, client-go-typed: sync time linear (per object) at 100000 ≤ 1.5× at 1000":            met + ", 1.00× (one run each)",
		"Growth, realistic Pods, generic-typed: bytes per object flat at 100000 ≤ 1.1× at 1000":                      missed + ", 1.20× (one run each)",
		"Growth, realistic Pods, generic-typed: sync time linear (per object) at 100000 ≤ 1.5× at 1000":              missed + ", 2.00× (one run each)",
		"Growth, realistic Pods, client-go-typed: client CPU time linear (per object) at 100000 ≤ 1.5× at 1000":      met + ", 1.00× (one run each)",
		"Growth, realistic Pods, generic-typed: client CPU time linear (per object) at 100000 ≤ 1.5× at 1000":        met + ", 1.40× (one run each)",
		"Growth, realistic Pods, generic-unstructured: client CPU time linear (per object) at 100000 ≤ 1.5× at 1000": notMeasured + ", —",
		"Growth, realistic Pods, generic-metadata: client CPU time linear (per object) at 100000 ≤ 1.5× at 1000":     notMeasured + ", —",
		"Growth, realistic Pods, generic-unstructured: bytes per object flat at 100000 ≤ 1.1× at 1000":               notMeasured + ", —",
		"Growth, realistic Pods, generic-unstructured: sync time linear (per object) at 100000 ≤ 1.5× at 1000":       notMeasured + ", —",
		"Growth, realistic Pods, generic-metadata: bytes per object flat at 100000 ≤ 1.1× at 1000":                   notMeasured + ", —",
		"Growth, realistic Pods, generic-metadata: sync time linear (per object) at 100000 ≤ 1.5× at 1000":           notMeasured + ", —",
	}
	if diff := cmp.Diff(wantVerdicts, verdicts); diff != "" {
		t.Errorf("growth targets (-want +got):\n%s", diff)
	}
}

// TestFailedRunsListed: a report whose runs partly failed is still
// written, and says which failed, near its top.
func TestFailedRunsListed(t *testing.T) {
	r := &report{objects: 10, count: 1, results: map[string][]result{}, benchstat: map[string]string{},
		failed: []string{"growth at 100000 objects: exit status 1"}}
	md, err := r.markdown()
	if err != nil {
		t.Fatal(err)
	}
	head, _, _ := strings.Cut(string(md), "## Targets")
	if !strings.Contains(head, "\n- growth at 100000 objects: exit status 1\n") {
		t.Errorf("the failed run is not listed before the targets:\n%s", head)
	}
}
