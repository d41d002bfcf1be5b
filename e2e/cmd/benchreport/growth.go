package main

import (
	"bytes"
	"fmt"
	"strconv"
)

// Issue 27's growth: BenchmarkCacheSize's realistic Pods at each of the
// report's scaling sizes, once, for client-go's typed informer and this
// library's typed, unstructured and metadata-only ones. Bytes per object
// should be flat, and the time to sync linear (flat per object).

const growthBench = cacheSizeBench + "pods"

var podsGrowth = sizedRun{"growth", growthBench, []string{"client-go-typed", "generic-typed", "generic-unstructured", "generic-metadata"}}

// growthCount is how many times the growth run measures each contender at
// each size: once. Each measure is a child process of its own, and the
// seed of 100,000 realistic Pods alone takes a quarter of an hour.
const growthCount = 1

func growthGroup() group {
	return group{
		name:      "growth",
		pattern:   "^BenchmarkCacheSize$/^resource=pods$/^contender=(client-go-typed|generic-typed|generic-unstructured|generic-metadata)$",
		benchtime: "1x",
	}
}

// growthSection is the growth run's table and charts, if it ran.
func (r *report) growthSection(w func(format string, args ...any), b *bytes.Buffer) {
	if len(r.scaling) == 0 {
		return
	}
	w("## Realistic Pods as the cluster grows\n\n")
	w("BenchmarkCacheSize's realistic Pods (see Cache size) at each size, one run per contender and size, each in a child process of its own (a seeded server of its own per size): the live heap per cached object and the time to sync, alone. Growth is linear where a contender's line is flat. The heap is a measure of memory, which does not vary with the machine's load as a time does: one run is enough for it; the times of one run are indicative only.\n\n")
	b.WriteString("| contender | objects | heap per object | time to sync, alone | per object |\n|---|---:|---:|---:|---:|\n")
	for _, c := range podsGrowth.contenders {
		for _, n := range r.scaling {
			results := r.results[podsGrowth.prefix+"-"+strconv.Itoa(n)]
			heap, ok := median(results, growthBench, c, "B/object")
			if !ok {
				continue
			}
			alone, _ := median(results, growthBench, c, "alone-ns/op")
			fmt.Fprintf(b, "| %s | %d | %s | %s | %s |\n", c, n, size(heap), duration(alone), duration(alone/float64(n)))
		}
	}
	b.WriteString("\n![Realistic Pods: sync time per object](benchmarks/growth-time.png)\n\n![Realistic Pods: heap per object](benchmarks/growth-heap.png)\n\n")
}

// growthTargets judges issue 27's growth target for each contender that
// ran at the smallest and the largest size: bytes per object flat (the
// largest size's within 1.1× the smallest's) and time linear (per object,
// within 1.5× the smallest's; one run each, so on the values alone).
func (r *report) growthTargets() []target {
	if len(r.scaling) < 2 {
		return nil
	}
	small, large := r.scaling[0], r.scaling[len(r.scaling)-1]
	var ts []target
	for _, c := range podsGrowth.contenders {
		for _, kind := range []struct {
			name, unit string
			limit      float64
			perObject  bool
		}{
			{"bytes per object flat", "B/object", 1.1, false},
			{"sync time linear (per object)", "alone-ns/op", 1.5, true},
		} {
			a, okA := median(r.results[podsGrowth.prefix+"-"+strconv.Itoa(large)], growthBench, c, kind.unit)
			b, okB := median(r.results[podsGrowth.prefix+"-"+strconv.Itoa(small)], growthBench, c, kind.unit)
			t := target{name: fmt.Sprintf("Growth, realistic Pods, %s: %s at %d ≤ %g× at %d", c, kind.name, large, kind.limit, small)}
			if !okA || !okB || b == 0 {
				t.measured, t.verdict = "—", notMeasured
				ts = append(ts, t)
				continue
			}
			if kind.perObject {
				a, b = a/float64(large), b/float64(small)
			}
			t.measured = fmt.Sprintf("%.2f× (one run each)", a/b)
			t.verdict = verdictOf(a/b <= kind.limit)
			ts = append(ts, t)
		}
	}
	return ts
}
