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
	{"Get", "cold"}, {"Get", "warm"}, {"ByIndex", "cold"}, {"ByIndex", "warm"},
}

func interleavedName(read, cpuCache string) string {
	return fmt.Sprintf("%sread=%s/cpucache=%s", interleavedBench, read, cpuCache)
}

// syncInterleavedBench is the prefix of BenchmarkSyncInterleaved's
// results, whose contenders are metrics too.
const syncInterleavedBench = "SyncInterleaved/"

// interleavedSyncs are BenchmarkSyncInterleaved's resources and WatchList
// settings, in the order of the report.
var interleavedSyncs = []struct{ resource, watchList string }{
	{"configmaps", "on"}, {"configmaps", "off"}, {"widgets", "on"}, {"widgets", "off"},
}

// syncInterleavedDropInBench is the prefix of
// BenchmarkSyncInterleavedDropIn's results.
const syncInterleavedDropInBench = "SyncInterleavedDropIn/"

func syncInterleavedName(resource, watchList string) string {
	return fmt.Sprintf("%sresource=%s/watchlist=%s", syncInterleavedBench, resource, watchList)
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

// interleavedTable writes BenchmarkReadInterleaved's table (see
// pairedTable), the control client-go's generated lister, with the
// drop-in's columns where it was measured.
func (r *report) interleavedTable(b *bytes.Buffer) {
	var rows []pairedRow
	for _, read := range interleavedReads {
		rows = append(rows, pairedRow{cells: []string{read.read, read.cpuCache}, bench: interleavedName(read.read, read.cpuCache)})
	}
	pairedTable(b, r.results["reads"], []string{"read", "CPU cache"}, rows, "client-go", "generic-unstructured-dropin")
}

// syncInterleavedTable writes BenchmarkSyncInterleaved's table (see
// pairedTable), the control client-go's typed informer.
func (r *report) syncInterleavedTable(b *bytes.Buffer) {
	var rows []pairedRow
	for _, sync := range interleavedSyncs {
		rows = append(rows, pairedRow{cells: []string{sync.resource, sync.watchList}, bench: syncInterleavedName(sync.resource, sync.watchList)})
	}
	pairedTable(b, r.results["syncinterleaved"], []string{"resource", "WatchList"}, rows, "client-go-typed")
}

// pairedRow is one interleaved bench of a pairedTable: the cells that name
// it, and its name in the results.
type pairedRow struct {
	cells []string
	bench string
}

// pairedTable writes a table of interleaved benches: per row, its cells,
// each contender's median time, generic-unstructured's paired ratio to
// generic-typed, and the control's (control to generic-typed: two typed
// contenders, near 1 if the measurement holds). A row not measured is left
// out. Each of extras measured in some row adds two columns, its median
// time and its paired ratio to generic-typed ("—" in a row without it).
func pairedTable(b *bytes.Buffer, results []result, header []string, rows []pairedRow, control string, extras ...string) {
	extras = measuredIn(results, rows, extras)
	var body bytes.Buffer
	for _, row := range rows {
		unstructured := pairedRatioOf(results, row.bench, "generic-unstructured", "generic-typed")
		controlRatio := pairedRatioOf(results, row.bench, control, "generic-typed")
		if unstructured.runs == 0 || controlRatio.runs == 0 {
			continue
		}
		fmt.Fprintf(&body, "| %s | %s | %s | %s | %s | %s |", strings.Join(row.cells, " | "),
			duration(unstructured.b), duration(unstructured.a), duration(controlRatio.a), unstructured.cell(), controlRatio.cell())
		for _, extra := range extras {
			if p := pairedRatioOf(results, row.bench, extra, "generic-typed"); p.runs > 0 {
				fmt.Fprintf(&body, " %s | %s |", duration(p.a), p.cell())
			} else {
				body.WriteString(" — | — |")
			}
		}
		body.WriteString("\n")
	}
	if body.Len() == 0 {
		b.WriteString("Not measured in this run.\n\n")
		return
	}
	fmt.Fprintf(b, "| %s | generic-typed | generic-unstructured | %s | unstructured / typed (range) | control: %s / typed (range) |",
		strings.Join(header, " | "), control, control)
	for _, extra := range extras {
		fmt.Fprintf(b, " %s | %s / typed (range) |", extra, extra)
	}
	b.WriteString("\n|" + strings.Repeat("---|", len(header)) + strings.Repeat("---:|", 5+2*len(extras)) + "\n")
	b.Write(body.Bytes())
	b.WriteString("\n")
}

// measuredIn returns those of contenders with a paired ratio to
// generic-typed in some row.
func measuredIn(results []result, rows []pairedRow, contenders []string) []string {
	var measured []string
	for _, c := range contenders {
		for _, row := range rows {
			if pairedRatioOf(results, row.bench, c, "generic-typed").runs > 0 {
				measured = append(measured, c)
				break
			}
		}
	}
	return measured
}

// cell writes r as a table's cell: the median ratio, and the range.
func (r pairedRatio) cell() string {
	return fmt.Sprintf("%.2f× (%.2f–%.2f)", r.value, r.min, r.max)
}

// isInterleaved reports whether bench is one of BenchmarkReadInterleaved's.
func isInterleaved(bench string) bool {
	return strings.HasPrefix(bench, interleavedBench)
}
