package main

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestReconcileRows renders the reconcile table from made-up runs
// (testdata/reconcile.txt, three runs of each contender): every column is
// the median of the runs, the ratio the library's time over
// controller-runtime's.
func TestReconcileRows(t *testing.T) {
	r := &report{results: map[string][]result{"reconcile": parseFile(t, "testdata/reconcile.txt")}}
	var b bytes.Buffer
	r.reconcileTable(&b)
	want := []string{
		"| generic | 200.0 ms | 0.50× | 50000 | 180.0 ms | 500000 | 60.0 MiB | 730000 |",
		"| controller-runtime | 400.0 ms | 1.00× | 25000 | 350.0 ms | 200000 | 70.0 MiB | 967000 |",
	}
	if diff := cmp.Diff(want, tableRows(b.String())); diff != "" {
		t.Errorf("reconcile rows (-want +got):\n%s", diff)
	}
}

// TestReconcileTarget judges the reconcile target (the library's time at
// most controller-runtime's) on made-up runs: times in ms per run of each
// contender.
func TestReconcileTarget(t *testing.T) {
	tests := []struct {
		name                       string
		generic, controllerRuntime []float64
		want                       string
	}{
		{"faster", []float64{200, 190, 210}, []float64{400, 410, 390}, met},
		{"as fast", []float64{400, 410, 390}, []float64{400, 410, 390}, met},
		// Every run slower: the samples differ (p < 0.05 at six runs each).
		{"slower", []float64{500, 510, 490, 505, 495, 520}, []float64{400, 410, 390, 405, 395, 420}, missed},
		// Slower medians, overlapping runs: noise.
		{"slower within the noise", []float64{420, 380, 450}, []float64{400, 410, 390}, inconclusive},
		{"controller-runtime not measured", []float64{200}, nil, notMeasured},
		{"generic not measured", nil, []float64{400}, notMeasured},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out strings.Builder
			for _, ms := range tc.generic {
				fmt.Fprintf(&out, "BenchmarkReconcile/contender=generic-2 \t 3\t %.0f ns/op\n", ms*1e6)
			}
			for _, ms := range tc.controllerRuntime {
				fmt.Fprintf(&out, "BenchmarkReconcile/contender=controller-runtime-2 \t 3\t %.0f ns/op\n", ms*1e6)
			}
			r := &report{results: map[string][]result{"reconcile": parse([]byte(out.String()))}}
			if got := r.reconcileTarget().verdict; got != tc.want {
				t.Errorf("verdict = %q, want %q (%s)", got, tc.want, r.reconcileTarget().measured)
			}
		})
	}
}
