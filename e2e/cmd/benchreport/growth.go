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
		env:       growthMemoryLimits,
	}
}

// growthMemoryLimits hold the growth run within a 24 GiB machine at
// 100,000 realistic Pods. The benchmark process holds the API server and
// etcd: its live heap reached 10 GB during the seed and 6.6 GB after it,
// and at GOGC's default of twice the live heap it grew to 22 GB resident,
// until the first child (client-go's cache, 3 GB live) left the machine
// without memory. A limit of 12 GiB on it, and of 8 GiB on each child
// (whose cache is at most 5.4 GB live, UnstructuredFor's), keep the two
// within the machine. A limit makes a process collect more often near
// it, not hold less: the heap a child measures is what its cache holds
// after two forced collections, with or without the limit. At 1,000 and
// 10,000 Pods no process comes near its limit.
var growthMemoryLimits = []string{"GOMEMLIMIT=12GiB", "BENCH_CHILD_GOMEMLIMIT=8GiB"}

// growthSection is the growth run's table and charts, if it ran.
func (r *report) growthSection(w func(format string, args ...any), b *bytes.Buffer) {
	if len(r.scaling) == 0 {
		return
	}
	w("## Realistic Pods as the cluster grows\n\n")
	w("BenchmarkCacheSize's realistic Pods (see Cache size) at each size, one run per contender and size, each in a child process of its own (a seeded server of its own per size): the live heap per cached object and the time to sync, alone. Growth is linear where a contender's line is flat. The heap is a measure of memory, which does not vary with the machine's load as a time does: one run is enough for it; the times of one run are indicative only. The time to sync is the wall time, which the API server's work, in the benchmark process on the same two cores, lengthens as the server's heap grows; the client's CPU is the time the child itself spent on the CPUs (its garbage collection included), which the server's work does not lengthen: the client's own cost. The benchmark process, which holds the API server and etcd, runs with `GOMEMLIMIT=12GiB` and each child with `8GiB`, so that the 100,000-Pod point fits a 24 GiB machine (growth.go says why): a limit makes a process collect more often near it, and does not change the heap its synced cache holds.\n\n")
	b.WriteString("| contender | objects | heap per object | time to sync, alone | per object | client CPU per object |\n|---|---:|---:|---:|---:|---:|\n")
	for _, c := range podsGrowth.contenders {
		for _, n := range r.scaling {
			results := r.results[podsGrowth.prefix+"-"+strconv.Itoa(n)]
			heap, ok := median(results, growthBench, c, "B/object")
			if !ok {
				continue
			}
			alone, _ := median(results, growthBench, c, "alone-ns/op")
			cpu := "—"
			if v, ok := median(results, growthBench, c, "alone-cpu-ns/op"); ok {
				cpu = duration(v / float64(n))
			}
			fmt.Fprintf(b, "| %s | %d | %s | %s | %s | %s |\n", c, n, size(heap), duration(alone), duration(alone/float64(n)), cpu)
		}
	}
	b.WriteString("\n![Realistic Pods: sync time per object](benchmarks/growth-time.png)\n\n![Realistic Pods: heap per object](benchmarks/growth-heap.png)\n\n")
}

// growthTargets judges issue 27's growth target for each contender that
// ran at the smallest and the largest size: bytes per object flat (the
// largest size's within 1.1× the smallest's) and time linear (per object,
// within 1.5× the smallest's; one run each, so on the values alone), as
// wall time and as the client's CPU time.
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
			{"client CPU time linear (per object)", "alone-cpu-ns/op", 1.5, true},
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
