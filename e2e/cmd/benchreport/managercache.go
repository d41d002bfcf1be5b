package main

import (
	"bytes"
	"fmt"
	"slices"
)

// A manager's cache (issue 47): controller-runtime's default cache.New and
// ctrlcache.New (this library's informers under controller-runtime's
// cache.Cache), made as a manager makes them. Their heap, from
// BenchmarkCacheSize's contenders of those names (realistic Pods, WatchList
// on, and off under resource=pods/watchlist=off), with the peak heap during
// the cold-start sync (peak-B/object); their reads through
// controller-runtime's client.Reader, from BenchmarkReadInterleaved's
// api=controller-runtime reads.

// managerCacheBaseline is the contender a manager's caches are compared
// with: controller-runtime's default cache.
const managerCacheBaseline = "controller-runtime"

// managerCache is a manager's cache measured against managerCacheBaseline,
// with issue 47's limit of its heap per object.
type managerCache struct {
	contender string
	heapLimit float64
}

// managerCaches are the manager's caches measured against
// managerCacheBaseline, in the report's order.
var managerCaches = []managerCache{
	{"ctrlcache", 0.4},
	// With the compact store for Pods
	// (ctrlcache.BuilderWithOptions, ByObject, generic.WithCompactStore).
	{"ctrlcache-compact", 0.15},
}

// managerCachePeakLimit is issue 47's limit of ctrlcache's peak heap during
// the cold-start sync, against controller-runtime's.
const managerCachePeakLimit = 0.5

// managerCacheWatchLists are the WatchList settings of the measures, each
// with the name of BenchmarkCacheSize's results of realistic Pods under it.
var managerCacheWatchLists = []struct{ watchList, bench string }{
	{"on", cacheSizeBench + "pods"},
	{"off", cacheSizeBench + "pods/watchlist=off"},
}

// managerCacheSection writes the section: what was measured, and a row per
// contender and WatchList setting measured.
func (r *report) managerCacheSection(w func(format string, args ...any), b *bytes.Buffer) {
	results := r.results["cachesize"]
	w("### A manager's cache: controller-runtime and ctrlcache\n\n")
	var rows bytes.Buffer
	for _, wl := range managerCacheWatchLists {
		basePerObject, _ := median(results, wl.bench, managerCacheBaseline, "B/object")
		basePeak, _ := median(results, wl.bench, managerCacheBaseline, "peak-B/object")
		for _, c := range contendersOf(results, wl.bench) {
			if c != managerCacheBaseline && !isManagerCache(c) {
				continue
			}
			perObject, _ := median(results, wl.bench, c, "B/object")
			peak, _ := median(results, wl.bench, c, "peak-B/object")
			sync, _ := median(results, wl.bench, c, "alone-ns/op")
			fmt.Fprintf(&rows, "| %s | %s | %.0f | %s | %.0f | %s | %s | %s | %s |\n", c, wl.watchList,
				perObject, ratio(perObject, basePerObject), peak, size(peak*float64(r.objects)), ratio(peak, basePeak), ratio(peak, perObject), duration(sync))
		}
	}
	if rows.Len() == 0 {
		w("Not measured in this run.\n\n")
		return
	}
	w("Issue 47: a manager's cache, made as a manager makes it (controller-runtime's `cluster.New`, which `manager.New` calls, with its HTTP client and dynamic RESTMapper; `DefaultLabelSelector` picks the fixture's objects), deep copy on (the default): `controller-runtime` is controller-runtime's default `cache.New`, `ctrlcache` is `ctrlcache.New` (`manager.Options{NewCache: ctrlcache.New}`), `ctrlcache-compact` is ctrlcache with the compact store for Pods (`ctrlcache.BuilderWithOptions` with `generic.WithCompactStore` in `Options.ByObject`, as `generic-typed-compact`'s). Each in a process of its own, as the contenders above, over the %d realistic Pods, with WatchList on (the rows of the table of realistic Pods above) and off. `peak` is the highest heap the process held while the informer synced, sampled every millisecond from the start of the sync until it had synced (runtime/metrics' `/memory/classes/heap/objects:bytes`, what `runtime.MemStats.HeapAlloc` is: live objects and garbage not yet collected, with the default GOGC), less the same baseline as the steady state's: what a cold start needs beyond the process's own, where `B/object` is what stays after the sync (two collections). A container's memory limit must hold the peak, and more (the heap the garbage collector keeps but has not yet given back to the OS is not in it). ", r.objects)
	if !slices.Contains(contendersOf(results, cacheSizeBench+"pods"), "ctrlcache-compact") {
		w("`ctrlcache-compact`, the compact store for Pods (`ctrlcache.BuilderWithOptions` with `generic.WithCompactStore` in `Options.ByObject`), is not measured in this run. ")
	}
	w("\n\n| contender | WatchList | B/object | vs controller-runtime | peak B/object | peak, all objects | peak vs controller-runtime | peak / B/object | sync time alone |\n|---|---|---:|---:|---:|---:|---:|---:|---:|\n")
	b.Write(rows.Bytes())
	b.WriteString("\n")
}

// isManagerCache reports whether contender is one of managerCaches.
func isManagerCache(contender string) bool {
	return slices.ContainsFunc(managerCaches, func(m managerCache) bool { return m.contender == contender })
}

// managerCacheTargets are issue 47's memory targets: each of managerCaches'
// heap per object against controller-runtime's (realistic Pods, WatchList
// on), and ctrlcache's peak heap during the cold-start sync against
// controller-runtime's, WatchList on and off. Judged as the other
// cache-size targets (fewRunsVerdict).
func (r *report) managerCacheTargets() []target {
	results := r.results["cachesize"]
	var ts []target
	for _, m := range managerCaches {
		t := ratioOf(results, cacheSizeBench+"pods", m.contender, managerCacheBaseline, "B/object")
		verdict, measured := fewRunsVerdict(t, m.heapLimit)
		ts = append(ts, target{
			name:     fmt.Sprintf("A manager's cache (realistic Pods, issue 47): %s ≤ %g× controller-runtime's default cache B/object, deep copy on in both", m.contender, m.heapLimit),
			measured: measured,
			verdict:  verdict,
		})
	}
	for _, wl := range managerCacheWatchLists {
		t := ratioOf(results, wl.bench, "ctrlcache", managerCacheBaseline, "peak-B/object")
		verdict, measured := fewRunsVerdict(t, managerCachePeakLimit)
		ts = append(ts, target{
			name:     fmt.Sprintf("Peak heap during a manager's cold-start sync (realistic Pods, WatchList %s, issue 47): ctrlcache ≤ %g× controller-runtime's", wl.watchList, managerCachePeakLimit),
			measured: measured,
			verdict:  verdict,
		})
	}
	return ts
}

// managerReadBench is the prefix of BenchmarkReadInterleaved's reads
// through controller-runtime's client.Reader, less the read and the CPU
// cache: "ReadInterleaved/api=controller-runtime/read=".
const managerReadBench = interleavedBench + "api=controller-runtime/read="

// managerReadControl is the control of those reads: a second
// controller-runtime cache.
const managerReadControl = "controller-runtime-control"

// managerReadLimit is issue 47's limit of ctrlcache's read time against
// controller-runtime's.
const managerReadLimit = 1.1

func managerReadName(read, cpuCache string) string {
	return fmt.Sprintf("%s%s/cpucache=%s", managerReadBench, read, cpuCache)
}

// managerReadTable writes the table of the reads through
// controller-runtime's client.Reader: per read and CPU cache state, each
// contender's median time, ctrlcache's paired ratio to
// controller-runtime's and the control's.
func (r *report) managerReadTable(b *bytes.Buffer) {
	results := r.results["reads"]
	var rows bytes.Buffer
	for _, read := range interleavedReads {
		bench := managerReadName(read.read, read.cpuCache)
		ctrlcache := pairedRatioOf(results, bench, "ctrlcache", managerCacheBaseline)
		control := pairedRatioOf(results, bench, managerReadControl, managerCacheBaseline)
		if ctrlcache.runs == 0 || control.runs == 0 {
			continue
		}
		fmt.Fprintf(&rows, "| %s | %s | %s | %s | %s | %s | %s |\n", read.read, read.cpuCache,
			duration(ctrlcache.b), duration(ctrlcache.a), duration(control.a), ctrlcache.cell(), control.cell())
	}
	if rows.Len() == 0 {
		b.WriteString("Not measured in this run.\n\n")
		return
	}
	b.WriteString("| read | CPU cache | controller-runtime | ctrlcache | controller-runtime-control | ctrlcache / controller-runtime (range) | control: controller-runtime-control / controller-runtime (range) |\n|---|---|---:|---:|---:|---:|---:|\n")
	b.Write(rows.Bytes())
	b.WriteString("\n")
}

// managerReadTargets are issue 47's read targets: ctrlcache's Get and List
// through controller-runtime's client.Reader at most managerReadLimit times
// controller-runtime's, deep copy on, judged on the interleaved runs' paired
// ratios, cold and warm, as the other interleaved read targets.
func (r *report) managerReadTargets() []target {
	var ts []target
	for _, read := range []string{"Get", "List"} {
		cold := pairedRatioOf(r.results["reads"], managerReadName(read, "cold"), "ctrlcache", managerCacheBaseline)
		warm := pairedRatioOf(r.results["reads"], managerReadName(read, "warm"), "ctrlcache", managerCacheBaseline)
		ts = append(ts, target{
			name:     fmt.Sprintf("Read%s through controller-runtime's client.Reader, deep copy on (issue 47): ctrlcache ≤ %g× controller-runtime's default cache's time (interleaved, CPU cache cold and warm)", read, managerReadLimit),
			measured: fmt.Sprintf("cold %s; warm %s", cold, warm),
			verdict:  worst(cold.verdict(managerReadLimit), warm.verdict(managerReadLimit)),
		})
	}
	return ts
}
