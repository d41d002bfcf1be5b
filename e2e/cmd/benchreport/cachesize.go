package main

import (
	"bytes"
	"fmt"
	"slices"
)

// The cache-size benchmark (BenchmarkCacheSize, issue 27): the live heap a
// synced informer's cache holds per object (B/object) and the time it took
// to sync (alone-ns/op), each contender in a process of its own, over
// realistic Pods and over ConfigMaps with payloads of their own. Its ns/op
// is the child process's whole run, and is not shown.

// cacheSizeBench is the prefix of BenchmarkCacheSize's results, less the
// resource: "CacheSize/resource=pods".
const cacheSizeBench = "CacheSize/resource="

// cacheSizeMaxCount caps BenchmarkCacheSize's -count: a run takes about
// ten minutes at 10,000 objects.
const cacheSizeMaxCount = 2

// cacheSizeBaseline is the contender the cache-size tables compare with.
const cacheSizeBaseline = "client-go-typed"

// cacheSizeSets are BenchmarkCacheSize's resources, in the order of the
// report, each with its section's heading, its name in the targets and its
// target for generic-typed's B/object against client-go-typed's.
var cacheSizeSets = []struct {
	resource, heading, title string
	sizeLimit                float64
	// v038Limit is issue 40's target for the same ratio against client-go
	// v0.38 (interned managedFields), and v038Name how the target says it.
	v038Limit float64
	v038Name  string
}{
	{"pods", "Realistic Pods", "realistic Pods", 0.7, 0.5, "≤ 0.5×"},
	// Below 0.90×, the ratio measured on client-go v0.38 before issue 40's
	// work (3,097 against 3,435 B).
	{"configmaps-unique", "ConfigMaps with payloads of their own", "ConfigMaps, payloads of their own", 0.9, 0.8999, "< 0.90× (the ratio before issue 40)"},
}

// cacheSizeSection writes the section: what was measured, the fixture and
// the contenders, then a table per resource (see cacheSizeTable).
func (r *report) cacheSizeSection(w func(format string, args ...any), b *bytes.Buffer) {
	results := r.results["cachesize"]
	w("## Cache size\n\n")
	runs := len(samples(results, cacheSizeBench+"pods", cacheSizeBaseline, "B/object"))
	if runs == 0 {
		w("Not measured in this run.\n\n")
		return
	}
	w("`BenchmarkCacheSize` (issue 27): the live heap a synced informer's cache holds per object, and the time it took to sync, with WatchList on, each contender measured in a process of its own (the benchmark binary re-executed): the heap after two GCs with the informer synced, less the same before it started with a warm client, divided by the objects; `sync time alone` is the time from start to synced there (the server, in the parent, still shares the CPUs). %s (it runs at most %d times, whatever `-count` says: a run takes about ten minutes at 10,000 objects). Issue 27's targets are in the targets table; with fewer runs than benchstat's test needs to tell two samples apart (4 each), they are judged on the ratio of the medians alone. ", runsOf(runs), cacheSizeMaxCount)
	w("The fixture, in the embedded kube-apiserver, each set picked by a label selector: %d realistic Pods, those of %d Deployments of 50 replicas on 50 nodes, each with three containers (an app, an envoy and a fluent-bit sidecar) with ports, env, probes, resources and mounts, five volumes (admission's kube-api-access one among them), its ReplicaSet's ownerReference and labels, the status a kubelet writes for a running Pod, and the managedFields of kube-controller-manager and of the kubelet as a cluster's would be; and %d ConfigMaps of about 2 KiB, the sync benchmark's with a payload of their own (no two equal, so that no sharing can fold them). ", r.objects, r.objects/50, r.objects)
	w("Contenders: client-go's generated typed informer (protobuf); this library's typed informer, sharing what repeats across objects at decode (`generic-typed`, the default) or not (`generic-typed-nosharing`, `typed.Clients{NoSharing: true}`); `typed.UnstructuredFor` (`generic-unstructured`) and `typed.MetadataFor` (`generic-metadata`); client-go's dynamicinformer and this library's drop-in for it (package `unstructured`, `generic-unstructured-dropin`), both over the dynamic client's objects (JSON); a manager's cache, controller-runtime's default (`controller-runtime`) and `ctrlcache.New`'s (`ctrlcache`, issue 47; see below). Where a typed Pod's bytes go: [profiles/typed-cache-accounting.md](profiles/typed-cache-accounting.md).\n\n")
	for _, set := range cacheSizeSets {
		w("### %s\n\n", set.heading)
		cacheSizeTable(b, results, cacheSizeBench+set.resource)
	}
}

// runsOf says how many runs the cache-size tables are the median of.
func runsOf(n int) string {
	if n == 1 {
		return "One run"
	}
	return fmt.Sprintf("The median of %d runs", n)
}

// cacheSizeTable writes bench's table: each contender's B/object and sync
// time alone, medians, with their ratios to client-go-typed's, in the
// benchmark's order.
func cacheSizeTable(b *bytes.Buffer, results []result, bench string) {
	b.WriteString("| contender | B/object | vs client-go-typed | sync time alone | vs client-go-typed |\n|---|---:|---:|---:|---:|\n")
	baseSize, _ := median(results, bench, cacheSizeBaseline, "B/object")
	baseSync, _ := median(results, bench, cacheSizeBaseline, "alone-ns/op")
	for _, c := range contendersOf(results, bench) {
		perObject, _ := median(results, bench, c, "B/object")
		sync, _ := median(results, bench, c, "alone-ns/op")
		fmt.Fprintf(b, "| %s | %.0f | %s | %s | %s |\n", c, perObject, ratio(perObject, baseSize), duration(sync), ratio(sync, baseSync))
	}
	b.WriteString("\n")
}

// contendersOf returns the contenders of bench's results, in order of
// appearance.
func contendersOf(results []result, bench string) []string {
	var names []string
	for _, r := range results {
		if r.bench == bench && !slices.Contains(names, r.contender) {
			names = append(names, r.contender)
		}
	}
	return names
}

// cacheSizeTargets are issue 27's targets, for each of BenchmarkCacheSize's
// resources: generic-typed's heap against client-go-typed's; its sync time
// against generic-typed-nosharing's, the time before sharing; and the
// drop-in's heap against client-go-typed's.
func (r *report) cacheSizeTargets() []target {
	var ts []target
	for _, kind := range []struct {
		name, a, b, unit string
		limit            float64 // 0: the resource's sizeLimit
	}{
		{"Cache size", "generic-typed", "client-go-typed", "B/object", 0},
		{"Initial sync", "generic-typed", "generic-typed-nosharing", "alone-ns/op", 1.1},
		{"Drop-in heap", "generic-unstructured-dropin", "client-go-typed", "B/object", 1.25},
	} {
		for _, set := range cacheSizeSets {
			limit := kind.limit
			if limit == 0 {
				limit = set.sizeLimit
			}
			t := ratioOf(r.results["cachesize"], cacheSizeBench+set.resource, kind.a, kind.b, kind.unit)
			verdict, measured := fewRunsVerdict(t, limit)
			ts = append(ts, target{
				name:     fmt.Sprintf("%s (%s): %s ≤ %g× %s %s", kind.name, set.title, kind.a, limit, kind.b, kind.unit),
				measured: measured,
				verdict:  verdict,
			})
		}
	}
	for _, set := range cacheSizeSets {
		t := ratioOf(r.results["cachesize"], cacheSizeBench+set.resource, "generic-typed", cacheSizeBaseline, "B/object")
		verdict, measured := fewRunsVerdict(t, set.v038Limit)
		ts = append(ts, target{
			name:     fmt.Sprintf("Cache size against client-go v0.38's interned managedFields (%s, issue 40): generic-typed %s client-go-typed B/object", set.title, set.v038Name),
			measured: measured,
			verdict:  verdict,
		})
	}
	return ts
}

// fewRunsVerdict judges "a is at most limit times b", and says what was
// measured, as measuredRatio does; but where the runs are too few for
// benchstat's test to tell any two samples apart (see canTell), on the
// ratio of medians alone: met or missed. Not measured if either is
// missing.
func fewRunsVerdict(t measuredRatio, limit float64) (verdict, measured string) {
	switch {
	case t.a == 0 || t.b == 0:
		return notMeasured, t.String()
	case canTell(t.runs):
		return t.verdict(limit), t.String()
	}
	runs := fmt.Sprintf("%d runs each", t.runs)
	if t.runs == 1 {
		runs = "one run each"
	}
	measured = fmt.Sprintf("%.2f× (%s vs %s; %s, too few for a p-value)", t.value, t.format(t.a), t.format(t.b), runs)
	return verdictOf(t.value <= limit), measured
}

// canTell reports whether benchstat's test can find two samples of n runs
// each different at all: whether the p-value of two such samples wholly
// apart is under 0.05. It is not with fewer than 4 runs each.
func canTell(n int) bool {
	a, b := make([]float64, n), make([]float64, n)
	for i := range b {
		b[i] = 1
	}
	return pValue(a, b) < 0.05
}
