package main

import (
	"bytes"
	"fmt"
	"strings"
)

// The sections of the scale-out, consistency and observability benchmarks:
// sharded sync per replica, read-your-writes latency, metrics overhead.

func (r *report) scaleOutSections(w func(format string, args ...any), b *bytes.Buffer) {
	w("## Sharding across replicas (KEP-5866)\n\n")
	w("One replica of n, `typed.NewFactory(..., generic.WithShard(0, n))`, syncing the %d ConfigMaps of the sync benchmark: time from Start until synced, the live heap its cache holds, and the objects it caches. `gate=on`: the API server's `ShardedListAndWatch` feature gate is on and the server filters; `gate=off`: it ignores the ShardSelector and the informer filters on the client (apimachinery's `pkg/sharding`, the same hash and bounds).\n\n", r.objects)
	r.shardTable(b)
	w("## Read your writes\n\n")
	w("`WaitForWrite` after an update of a ConfigMap: the time from the update's response to the wait's return, over every op of the run.\n\n")
	r.readYourWritesTable(b)
	w("## Metrics overhead\n\n")
	w("BenchmarkIngest's generic contender with `WithMetricsProvider` (the Prometheus adapter, `genericprometheus`) and without: the elapsed time for all events, and the process's CPU time per event (user and system, from getrusage), on which the target is judged.\n\n")
	r.metricsTable(b)
}

func (r *report) shardTable(b *bytes.Buffer) {
	results := r.results["sharding"]
	b.WriteString("| gate | n | time to sync | vs n=1 | heap | objects cached |\n|---|---|---|---|---|---|\n")
	for _, gate := range []string{"on", "off"} {
		base, _ := median(results, "ShardedSync/gate="+gate+"/n=1", "", "ns/op")
		for _, n := range []string{"1", "2", "4"} {
			bench := "ShardedSync/gate=" + gate + "/n=" + n
			ns, ok := median(results, bench, "", "ns/op")
			if !ok {
				continue
			}
			heap, _ := median(results, bench, "", "heap-B")
			objs, _ := median(results, bench, "", "objects")
			fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %.0f |\n", gate, n, duration(ns), ratio(ns, base), size(heap), objs)
		}
	}
	b.WriteString("\n")
}

func (r *report) readYourWritesTable(b *bytes.Buffer) {
	results := r.results["readyourwrites"]
	b.WriteString("| p50 | p99 | ns/op (update + wait) |\n|---|---|---|\n")
	p50, _ := median(results, "WaitForWrite", "", "p50-ns")
	p99, _ := median(results, "WaitForWrite", "", "p99-ns")
	ns, _ := median(results, "WaitForWrite", "", "ns/op")
	fmt.Fprintf(b, "| %s | %s | %s |\n\n", duration(p50), duration(p99), duration(ns))
}

func (r *report) metricsTable(b *bytes.Buffer) {
	results := r.results["metrics"]
	var off string
	for _, bench := range benches(results) {
		if strings.HasSuffix(bench, "metrics=none") {
			off = bench
		}
	}
	base, _ := median(results, off, "", "ns/op")
	cpuBase, _ := median(results, off, "", "cpu-ns/event")
	b.WriteString("| variant | time for all events | vs none | CPU time per event | vs none | target: under 5% (CPU time) |\n|---|---|---|---|---|---|\n")
	for _, bench := range benches(results) {
		ns, _ := median(results, bench, "", "ns/op")
		cpu, _ := median(results, bench, "", "cpu-ns/event")
		verdict := "-"
		if bench != off {
			verdict = overheadVerdict(cpu, cpuBase, pValue(samples(results, bench, "", "cpu-ns/event"), samples(results, off, "", "cpu-ns/event")))
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s |\n", strings.TrimPrefix(bench, "IngestMetrics/"), duration(ns), ratio(ns, base), duration(cpu), ratio(cpu, cpuBase), verdict)
	}
	b.WriteString("\n")
}

// overheadVerdict judges the metrics' overhead, got against base, on the
// target of under 5%: the process's CPU time per event is what the
// metrics cost the machine, and steadier than the elapsed time on a
// machine of two cores shared with the benchmark's own goroutines.
func overheadVerdict(got, base, p float64) string {
	switch {
	case got < base*1.05:
		return fmt.Sprintf("met (p=%.3f)", p)
	case p >= 0.05:
		return fmt.Sprintf("%s (p=%.3f)", inconclusive, p)
	default:
		return fmt.Sprintf("missed (p=%.3f)", p)
	}
}
