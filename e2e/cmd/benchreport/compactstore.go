package main

import (
	"bytes"
	"fmt"
	"slices"
)

// The compact store (issue 40): its heap per object, from
// BenchmarkCacheSize's generic-typed-compact contender, and what its reads
// cost, from BenchmarkCompactRead, beside the default store.

// compactReadBench is the prefix of BenchmarkCompactRead's results, less
// the read: "CompactRead/read=get-miss".
const compactReadBench = "CompactRead/read="

// compactReads are BenchmarkCompactRead's reads, in the report's order,
// each with what it is.
var compactReads = []struct{ read, what string }{
	{"get-miss", "`Namespace(ns).Get` of each Pod in turn: every read misses the compact store's decoded objects"},
	{"get-hot", "`Get` of each of 1,000 Pods in turn, all read once before (kept decoded)"},
	{"get-pattern", "`Get`, 90% of the reads on 1,000 hot Pods, 10% on the others, at random"},
	{"list-selector", "`List` with a label selector that matches one Deployment's 50 Pods"},
}

// compactStoreSection writes the section: the heap per object, and a
// table of the reads.
func (r *report) compactStoreSection(w func(format string, args ...any), b *bytes.Buffer) {
	w("## Compact store\n\n")
	sizes, reads := r.results["cachesize"], r.results["compactread"]
	w("`generic.WithCompactStore(1000)` (issue 40): objects kept as their protobuf encoding, compressed with S2 against a dictionary, and the 1,000 read last kept decoded. Heap per object from `BenchmarkCacheSize` (see Cache size; its decoded objects are full once synced, and count), the default store (`generic-typed`) beside it:\n\n")
	w("| objects | generic-typed | generic-typed-compact | compact vs default |\n|---|---:|---:|---:|\n")
	for _, set := range cacheSizeSets {
		bench := cacheSizeBench + set.resource
		def, _ := median(sizes, bench, "generic-typed", "B/object")
		compact, _ := median(sizes, bench, "generic-typed-compact", "B/object")
		w("| %s | %.0f | %.0f | %s |\n", set.title, def, compact, ratio(compact, def))
	}
	w("\n")
	runs := len(samples(reads, compactReadBench+"get-miss", "generic-typed-compact", "ns/op"))
	if runs == 0 {
		w("Reads: not measured in this run.\n\n")
		return
	}
	w("Reads (`BenchmarkCompactRead`, %d realistic Pods, both stores synced in the benchmark's process; the medians of %d runs). `protobuf-decode` is one `corev1.Pod.Unmarshal` of a cached Pod's encoding: what a read that misses is compared with. p50 and p99 are of the single reads of the read pattern.\n\n", r.objects, runs)
	b.WriteString("| read | generic-typed | generic-typed-compact | compact vs default | p50, default / compact | p99, default / compact |\n|---|---:|---:|---:|---:|---:|\n")
	for _, read := range compactReads {
		bench := compactReadBench + read.read
		def, _ := median(reads, bench, "generic-typed", "ns/op")
		compact, _ := median(reads, bench, "generic-typed-compact", "ns/op")
		p50, p99 := "", ""
		if v, ok := median(reads, bench, "generic-typed-compact", "p50-ns"); ok {
			d, _ := median(reads, bench, "generic-typed", "p50-ns")
			p50 = duration(d) + " / " + duration(v)
			d, _ = median(reads, bench, "generic-typed", "p99-ns")
			v, _ = median(reads, bench, "generic-typed-compact", "p99-ns")
			p99 = duration(d) + " / " + duration(v)
		}
		fmt.Fprintf(b, "| %s: %s | %s | %s | %s | %s | %s |\n", read.read, read.what, duration(def), duration(compact), ratio(compact, def), p50, p99)
	}
	decode, _ := median(reads, compactReadBench+"get-miss", "protobuf-decode", "ns/op")
	fmt.Fprintf(b, "| one protobuf decode of a Pod | %s | | | | |\n\n", duration(decode))
	if paired := pairedMiss(reads); paired.runs > 0 {
		fmt.Fprintf(b, "In turn within every iteration (`read=get-miss-paired`: one protobuf decode of a Pod, then a compact store's `Get` of another that misses, each timed), a read that misses took %.2f× one decode (%s against %s; the range over %d runs: %.2f–%.2f×). Runs one after the other do not share their conditions: above, the decode ran first, just after the sync.\n\n",
			paired.median, duration(paired.miss), duration(paired.decode), paired.runs, paired.low, paired.high)
	}
}

// pairedMissResult is read=get-miss-paired's: the median over the runs of
// miss-ns over decode-ns, its range, and the median times.
type pairedMissResult struct {
	median, low, high, miss, decode float64
	runs                            int
}

func pairedMiss(reads []result) pairedMissResult {
	bench := compactReadBench + "get-miss-paired"
	misses := samples(reads, bench, "generic-typed-compact", "miss-ns")
	decodes := samples(reads, bench, "generic-typed-compact", "decode-ns")
	var ratios []float64
	for i := range min(len(misses), len(decodes)) {
		if decodes[i] > 0 {
			ratios = append(ratios, misses[i]/decodes[i])
		}
	}
	if len(ratios) == 0 {
		return pairedMissResult{}
	}
	return pairedMissResult{
		median: medianOf(ratios), low: slices.Min(ratios), high: slices.Max(ratios),
		miss: medianOf(misses), decode: medianOf(decodes), runs: len(ratios),
	}
}

// compactStoreTargets are issue 40's targets of the compact store: its heap
// per realistic Pod at most half the default store's, a read that misses at
// most 1.2 times one protobuf decode, and the read pattern's p50, reported.
func (r *report) compactStoreTargets() []target {
	sizes, reads := r.results["cachesize"], r.results["compactread"]
	heap := ratioOf(sizes, cacheSizeBench+"pods", "generic-typed-compact", "generic-typed", "B/object")
	heapVerdict, heapMeasured := fewRunsVerdict(heap, 0.5)
	miss := ratioOf(reads, compactReadBench+"get-miss", "generic-typed-compact", "protobuf-decode", "ns/op")
	missVerdict, missMeasured := fewRunsVerdict(miss, 1.2)
	if paired := pairedMiss(reads); paired.runs > 0 {
		// Judged in turn, as the interleaved targets are.
		missVerdict = verdictOf(paired.median <= 1.2)
		missMeasured = fmt.Sprintf("in turn: %.2f× (%.2f–%.2f× over %d runs; %s vs %s); one after the other: %s", paired.median, paired.low, paired.high, paired.runs, duration(paired.miss), duration(paired.decode), missMeasured)
	}
	p50, ok := median(reads, compactReadBench+"get-pattern", "generic-typed-compact", "p50-ns")
	p50Default, _ := median(reads, compactReadBench+"get-pattern", "generic-typed", "p50-ns")
	p50Verdict, p50Measured := notMeasured, "–"
	if ok {
		p50Verdict = "reported"
		p50Measured = fmt.Sprintf("%s (the default store: %s)", duration(p50), duration(p50Default))
	}
	return []target{
		{name: "Compact store (realistic Pods): generic-typed-compact ≤ 0.5× generic-typed B/object", measured: heapMeasured, verdict: heapVerdict},
		{name: "Compact store: a Get that misses its decoded objects ≤ 1.2× one protobuf decode", measured: missMeasured, verdict: missVerdict},
		{name: "Compact store: Get p50, 90% of reads on 1,000 hot Pods of all", measured: p50Measured, verdict: p50Verdict},
	}
}
