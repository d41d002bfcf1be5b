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
			name:  "one size",
			sizes: map[int]string{1000: "scaling_1000.txt"},
			want: []string{
				"| generic-unstructured | 1000 | 40.0 ms | 40.00 µs | 80.0 ms | 80.00 µs | 60.0 | 4.00 KiB |",
			},
		},
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
	var rows []string
	for _, line := range strings.Split(s, "\n") {
		if strings.HasPrefix(line, "| ") && !strings.HasPrefix(line, "| contender") {
			rows = append(rows, line)
		}
	}
	return rows
}
