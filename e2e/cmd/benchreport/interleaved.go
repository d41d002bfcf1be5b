package main

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
)

// interleavedBench is the prefix of BenchmarkReadInterleaved's results:
// "ReadInterleaved/read=List/cpucache=cold", ... Its contenders are not
// sub-benchmarks but metrics of each result ("generic-typed-ns/op").
const interleavedBench = "ReadInterleaved/"

// interleavedReads are BenchmarkReadInterleaved's reads and CPU cache
// states, in the order of the report.
var interleavedReads = []struct{ read, cpuCache string }{
	{"List", "cold"}, {"List", "warm"}, {"NamespaceList", "cold"}, {"NamespaceList", "warm"},
}

func interleavedName(read, cpuCache string) string {
	return fmt.Sprintf("%sread=%s/cpucache=%s", interleavedBench, read, cpuCache)
}

// pairedRatio is the median, over the runs of an interleaved bench, of a's
// time over b's in the same run (the ratio of two contenders that read
// under the same conditions), with the smallest and largest of those
// ratios, each contender's median time and the number of runs.
type pairedRatio struct {
	value, min, max, a, b float64
	runs                  int
}

func pairedRatioOf(results []result, bench, a, b string) pairedRatio {
	var ratios, as, bs []float64
	for _, r := range results {
		va, okA := r.values[a+"-ns/op"]
		vb, okB := r.values[b+"-ns/op"]
		if r.bench != bench || !okA || !okB || vb == 0 {
			continue
		}
		ratios, as, bs = append(ratios, va/vb), append(as, va), append(bs, vb)
	}
	if len(ratios) == 0 {
		return pairedRatio{}
	}
	return pairedRatio{
		value: medianOf(ratios), min: slices.Min(ratios), max: slices.Max(ratios),
		a: medianOf(as), b: medianOf(bs), runs: len(ratios),
	}
}

func (r pairedRatio) String() string {
	if r.runs == 0 {
		return notMeasured
	}
	return fmt.Sprintf("%.2f× (%.2f–%.2f× over %d paired runs; median times %s and %s)", r.value, r.min, r.max, r.runs, duration(r.a), duration(r.b))
}

// verdict judges "a's time is at most limit times b's" as the other
// targets are judged (within): met if the median ratio is; missed if every
// run's ratio exceeds it; inconclusive otherwise, the runs on both sides.
func (r pairedRatio) verdict(limit float64) string {
	switch {
	case r.runs == 0:
		return notMeasured
	case r.value <= limit:
		return met
	case r.min > limit:
		return missed
	}
	return inconclusive
}

// interleavedTable writes BenchmarkReadInterleaved's table: each
// contender's median time, generic-unstructured's paired ratio to
// generic-typed, and the control's (client-go to generic-typed).
func (r *report) interleavedTable(b *bytes.Buffer) {
	results := r.results["reads"]
	var rows bytes.Buffer
	for _, read := range interleavedReads {
		bench := interleavedName(read.read, read.cpuCache)
		unstructured := pairedRatioOf(results, bench, "generic-unstructured", "generic-typed")
		control := pairedRatioOf(results, bench, "client-go", "generic-typed")
		if unstructured.runs == 0 || control.runs == 0 {
			continue
		}
		fmt.Fprintf(&rows, "| %s | %s | %s | %s | %s | %.2f× (%.2f–%.2f) | %.2f× (%.2f–%.2f) |\n", read.read, read.cpuCache,
			duration(unstructured.b), duration(unstructured.a), duration(control.a),
			unstructured.value, unstructured.min, unstructured.max, control.value, control.min, control.max)
	}
	if rows.Len() == 0 {
		b.WriteString("Not measured in this run.\n\n")
		return
	}
	b.WriteString("| read | CPU cache | generic-typed | generic-unstructured | client-go | unstructured / typed (range) | control: client-go / typed (range) |\n|---|---|---:|---:|---:|---:|---:|\n")
	b.Write(rows.Bytes())
	b.WriteString("\n")
}

// isInterleaved reports whether bench is one of BenchmarkReadInterleaved's.
func isInterleaved(bench string) bool {
	return strings.HasPrefix(bench, interleavedBench)
}
