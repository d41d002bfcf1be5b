package main

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// report is what the benchmarks measured, for docs/benchmarks.md.
type report struct {
	objects, count int
	scaling        []int               // sizes of the scaling run, if it ran
	results        map[string][]result // group -> results
	benchstat      map[string]string   // group -> benchstat's output
	failed         []string            // the runs that failed, one line each
	reused         []runOutput         // the runs taken from an earlier run (-reuse)
	took           time.Duration       // the time the runs made now took
}

// scope is what r.took covers.
func (r *report) scope() string {
	if len(r.reused) == 0 {
		return "whole set"
	}
	return "runs made now"
}

// reusedRuns lists the runs taken from an earlier run's raw output, and the
// library's version each measured.
func (r *report) reusedRuns(w func(format string, args ...any)) {
	if len(r.reused) == 0 {
		return
	}
	w("**Runs taken from an earlier run** on this machine (`-reuse`; each comes whole from that run's raw output, all its contenders together), with the library's version they measured (and the client-go it was built with; a run that names none predates the move to Kubernetes 1.38 and measured client-go v0.37.2, whatever the versions above say):\n\n")
	for _, o := range r.reused {
		w("- %s: %s\n", o.name, o.library)
	}
	w("\n")
}

func (r *report) markdown() ([]byte, error) {
	var b bytes.Buffer
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("# Benchmarks\n\n")
	w("Written by `go -C e2e run ./cmd/benchreport` (%s, %d objects, `-count %d`, %v for the %s). ",
		time.Now().UTC().Format("2006-01-02"), r.objects, r.count, r.took.Round(time.Second), r.scope())
	w("Every contender ran in the same run, on the same machine; the tables give medians, and benchstat's tables, with confidence intervals, are at the end. Raw output: [benchmarks/raw.txt](benchmarks/raw.txt).\n\n")
	w("%s\n", machine())
	r.reusedRuns(w)
	if len(r.failed) > 0 {
		w("**Runs that failed** (their targets are not measured; their output is in the report's standard error):\n\n")
		for _, f := range r.failed {
			w("- %s\n", f)
		}
		w("\n")
	}
	w("## Targets\n\n%s\n", r.targets())
	w("## Reads from the cache\n\n")
	w("%d Pods in 100 namespaces, listed from an embedded kube-apiserver into informer caches with a namespace index and a node index, each by the informer its readers' users have: client-go's typed informer (protobuf) for `generic-typed` and the generated listers, `typed.UnstructuredFor` for `generic-unstructured`, client-go's dynamic informer for dynamiclister, this library's drop-in for it (package `unstructured`, over the dynamic client's objects as its ingest interns and lays them out) for `generic-unstructured-dropin`, this library's typed informer (`typed.InformerFor`, whose decoder makes objects share what repeats) for `generic-typed-shared`, controller-runtime's cache for controller-runtime, `ctrlcache.New`'s (this library's informers under controller-runtime's `cache.Cache`, issue 47) for ctrlcache. The caches are filled once per process; then the informers, the API server and its etcd are stopped and their garbage collected, and only then are the reads measured. ", r.objects)
	w("Listers are obtained as a controller obtains them, through an interface (an informer's `Lister()`); `client-go-inplace` is client-go's best case, a generated lister made where it is read, which lets the compiler devirtualize its calls. controller-runtime and ctrlcache read through their cache's `client.Reader`: by default it deep-copies each object; `-nodeepcopy` is `UnsafeDisableDeepCopy`. ctrlcache's cache runs on while it is read (its informer retrying against the stopped server, at most every 30 s): it reads through the Registry's Handles, which refuse reads once their informer has stopped. The generated listers and dynamiclister have no ByIndex: their rows use the indexer and a type assertion per object, as their users write it.\n\n")
	for _, bench := range benches(r.results["reads"]) {
		if isInterleaved(bench) {
			continue
		}
		w("### %s\n\n", strings.TrimPrefix(bench, "Read"))
		r.readTable(&b, bench)
	}
	w("### Reads, interleaved\n\n")
	if typedList := samples(r.results["reads"], "ReadList", "generic-typed", "ns/op"); len(typedList) > 0 {
		w("The tables above run one contender after another, and what one memory-bound read costs changes from run to run: in this run, generic-typed's List took %s to %s. ", duration(slices.Min(typedList)), duration(slices.Max(typedList)))
	}
	w("`BenchmarkReadInterleaved` runs its contenders in turn within every iteration (starting with a different one each time), each over a cache of its own (client-go over a second typed cache, filled as generic-typed's is), and reports each one's time: the contenders read under the same conditions. They are generic-typed, generic-unstructured, client-go's generated lister and the drop-in's Lister (`generic-unstructured-dropin`, package `unstructured`, over the dynamic client's objects as its ingest interns and lays them out), and generic-typed's Lister over this library's typed informer's objects, which share what repeats (`generic-typed-shared`; generic-typed reads client-go's). Cold: between two reads of one contender come reads of the others, which push its objects out of the CPU's caches in part or in whole, as a controller's other work does between reconciles. Warm: each timed read follows the same read, untimed. A read of Get is a batch of Gets, and one of ByIndex the Pods of a batch of nodes (their sizes are in BenchmarkReadInterleaved), so that the clock's own cost is small beside what it times; the times are per read. The ratios are medians of the ratios within each run, with the range over the runs; the control, two listers of typed objects, should be near 1 for List and Namespace(ns).List, where the two do the same work; for Get and ByIndex, client-go's reads make one allocation more each than generic-typed's (see the tables above), and the control is above 1. Issue 12's time targets are judged here, and so are the targets against client-go's generated lister (the control, inverted), the drop-in's against generic-typed, and issue 27's reads over a cache that shares (generic-typed-shared against generic-typed).\n\n")
	r.interleavedTable(&b)
	w("### Reads through controller-runtime's client.Reader, interleaved\n\n")
	w("`BenchmarkReadInterleaved`'s reads under `api=controller-runtime` (issue 47): the same reads (ByIndex with `client.MatchingFields` on the node index), through the `client.Reader` of controller-runtime's default cache, of ctrlcache's (`ctrlcache.New`) and of a second controller-runtime cache, the control (`controller-runtime-control`: two caches alike, near 1 if the measurement holds), deep copy on in all three, in turn within every iteration, each over a cache of its own; apart from the listers above, whose reads take a fraction of a deep-copying read's. Issue 47's read targets are judged here.\n\n")
	r.managerReadTable(&b)
	w("## Ingest\n\n")
	w("%d watch events (%d adds, then updates) from a fake watch through an informer to a handler that counts them; one op is all of them. `generic` is `Informer[*corev1.Pod]` with a typed handler, `client-go` a `SharedIndexInformer` with a plain handler.\n\n", 10*r.objects, r.objects)
	r.ingestTable(&b)
	w("### A typed view of a dynamic feed\n\n")
	w("Reading a `*corev1.Pod` from a cache fed unstructured objects: converted once at ingest (`generic.FromUnstructured`, then a `Lister[*corev1.Pod]` Get) against the common pattern of converting at every read (dynamiclister Get, then `runtime.DefaultUnstructuredConverter.FromUnstructured`).\n\n")
	r.typedViewTable(&b)
	w("## Initial sync from a real API server\n\n")
	w("%d ConfigMaps and %d Widgets (a CRD) of about 2 KiB each, in an embedded kube-apiserver (same process). One op is one informer, from start until synced; `B/object` is the live heap the synced cache holds, measured once per contender and run in a process of its own, so that the server's caches do not count (the benchmark binary re-executed: heap after two GCs with the informer synced, less the same with only a warm client, divided by the objects); `alone` is the time that sync took there, the client in a process of its own (one sample per run; the server, in the parent, still shares the CPUs), and `allocs/op, alone` the allocations the client made to sync there (the first sync in that process: the client's one-time set-up counts too); `allocs/op, with the server` are the benchmark process's, which count the embedded API server's work to serve the sync too. WatchList (client-go's `WatchListClient` feature, on by default since 1.35) on and off. `-stripped` is `generic.WithStripManagedFields()`. For Widgets, `client-go-typed` is the informer informer-gen would generate (a typed REST client's `ListWatch`), written by hand. Ratios: typed contenders against `client-go-typed`, unstructured ones against `client-go-dynamic`.\n\n", r.objects, r.objects)
	for _, bench := range benches(r.results["sync"]) {
		w("### %s\n\n", strings.ReplaceAll(strings.TrimPrefix(bench, "Sync/"), "/", ", "))
		r.syncTable(&b, bench)
	}
	w("![Time to sync](benchmarks/sync.png)\n\n")
	w("### Sync, interleaved\n\n")
	w("The tables above run one contender after another, and the machine's slow and fast spells fall on some contenders and not others. `BenchmarkSyncInterleaved` syncs generic-typed, generic-unstructured and client-go-typed in turn within every iteration (starting with a different one each time; three iterations a run), against a server seeded as theirs, and reports each one's time: the contenders sync under the same conditions. The ratios are medians of the ratios within each run, with the range over the runs; the control, two typed informers, should be near 1. Issue 12's sync targets are judged here, and so is the typed informer's target against client-go's (the control, inverted). `BenchmarkSyncInterleavedDropIn` does the same for the drop-in and client-go's dynamic informer (two iterations a run), whose target it judges: its ratios are in the targets.\n\n")
	r.syncInterleavedTable(&b)
	w("## Memory per cached object\n\n")
	r.memoryTable(&b)
	w("![Memory per cached object](benchmarks/memory.png)\n\n")
	r.cacheSizeSection(w, &b)
	r.managerCacheSection(w, &b)
	r.compactStoreSection(w, &b)
	r.scalingSection(w, &b)
	r.growthSection(w, &b)
	r.scaleOutSections(w, &b)
	r.reconcileSection(w, &b)
	w("## benchstat\n\n")
	for _, g := range groups {
		w("<details><summary>%s</summary>\n\n```\n%s```\n\n</details>\n\n", g.name, r.benchstat[g.name])
	}
	return b.Bytes(), nil
}

func (r *report) readTable(b *bytes.Buffer, bench string) {
	results := r.results["reads"]
	fmt.Fprintf(b, "| contender | time/op | vs client-go | B/op | allocs/op |\n|---|---:|---:|---:|---:|\n")
	base, _ := median(results, bench, "client-go", "ns/op")
	for _, c := range contenders(results) {
		ns, ok := median(results, bench, c, "ns/op")
		if !ok {
			continue // not a contender of this read (ReadList has five)
		}
		bytesOp, _ := median(results, bench, c, "B/op")
		allocs, _ := median(results, bench, c, "allocs/op")
		fmt.Fprintf(b, "| %s | %s | %s | %.0f | %.0f |\n", c, duration(ns), ratio(ns, base), bytesOp, allocs)
	}
	b.WriteString("\n")
}

func (r *report) ingestTable(b *bytes.Buffer) {
	results := r.results["ingest"]
	fmt.Fprintf(b, "| contender | time/op | per event | vs client-go | B/op | allocs/op |\n|---|---:|---:|---:|---:|---:|\n")
	base, _ := median(results, "Ingest", "client-go", "ns/op")
	for _, c := range contenders(results) {
		sec, _ := median(results, "Ingest", c, "ns/op")
		perEvent, _ := median(results, "Ingest", c, "ns/event")
		bytesOp, _ := median(results, "Ingest", c, "B/op")
		allocs, _ := median(results, "Ingest", c, "allocs/op")
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %.0f |\n", c, duration(sec), duration(perEvent), ratio(sec, base), size(bytesOp), allocs)
	}
	b.WriteString("\n")
}

func (r *report) typedViewTable(b *bytes.Buffer) {
	results := r.results["typedview"]
	fmt.Fprintf(b, "| contender | time/read | B/read | allocs/read |\n|---|---:|---:|---:|\n")
	for _, c := range contenders(results) {
		ns, _ := median(results, "TypedViewRead", c, "ns/op")
		bytesOp, _ := median(results, "TypedViewRead", c, "B/op")
		allocs, _ := median(results, "TypedViewRead", c, "allocs/op")
		fmt.Fprintf(b, "| %s | %s | %.0f | %.0f |\n", c, duration(ns), bytesOp, allocs)
	}
	b.WriteString("\n")
}

func (r *report) syncTable(b *bytes.Buffer, bench string) {
	results := r.results["sync"]
	fmt.Fprintf(b, "| contender | time to sync | vs client-go | alone | B/object | vs client-go | allocs/op, with the server | allocs/op, alone |\n|---|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, c := range contenders(results) {
		sec, _ := median(results, bench, c, "ns/op")
		alone, _ := median(results, bench, c, "alone-ns/op")
		perObject, _ := median(results, bench, c, "B/object")
		allocs, _ := median(results, bench, c, "allocs/op")
		allocsAlone, aloneOK := median(results, bench, c, "alone-allocs/op")
		baseline := syncBaseline(c)
		baseSec, _ := median(results, bench, baseline, "ns/op")
		basePerObject, _ := median(results, bench, baseline, "B/object")
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %.0f | %s |\n", c, duration(sec), ratio(sec, baseSec), duration(alone), size(perObject), ratio(perObject, basePerObject), allocs, count(allocsAlone, aloneOK, 1))
	}
	b.WriteString("\n")
}

// syncBaseline is the client-go informer a sync contender is compared with.
func syncBaseline(contender string) string {
	if strings.Contains(contender, "unstructured") || contender == "client-go-dynamic" {
		return "client-go-dynamic"
	}
	return "client-go-typed"
}

func (r *report) memoryTable(b *bytes.Buffer) {
	results := r.results["sync"]
	fmt.Fprintf(b, "Live heap per cached object after the initial sync (WatchList on), from the sync benchmark.\n\n")
	fmt.Fprintf(b, "| contender | ConfigMaps | Widgets |\n|---|---:|---:|\n")
	for _, c := range contenders(results) {
		cm, _ := median(results, "Sync/resource=configmaps/watchlist=on", c, "B/object")
		w, _ := median(results, "Sync/resource=widgets/watchlist=on", c, "B/object")
		fmt.Fprintf(b, "| %s | %s | %s |\n", c, size(cm), size(w))
	}
	b.WriteString("\nStripping managedFields at ingest saves, per object:\n\n| view | ConfigMaps | Widgets |\n|---|---:|---:|\n")
	for _, view := range []string{"generic-typed", "generic-unstructured"} {
		fmt.Fprintf(b, "| %s | %s | %s |\n", view,
			saving(results, "Sync/resource=configmaps/watchlist=on", view),
			saving(results, "Sync/resource=widgets/watchlist=on", view))
	}
	b.WriteString("\n")
}

func saving(results []result, bench, view string) string {
	full, _ := median(results, bench, view, "B/object")
	stripped, _ := median(results, bench, view+"-stripped", "B/object")
	if full == 0 {
		return "–"
	}
	return fmt.Sprintf("%s (%.0f%%)", size(full-stripped), 100*(full-stripped)/full)
}

func ratio(v, base float64) string {
	if base == 0 || v == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f×", v/base)
}

func duration(ns float64) string {
	switch {
	case ns >= 1e9:
		return fmt.Sprintf("%.2f s", ns/1e9)
	case ns >= 1e6:
		return fmt.Sprintf("%.1f ms", ns/1e6)
	case ns >= 1e3:
		return fmt.Sprintf("%.2f µs", ns/1e3)
	}
	return fmt.Sprintf("%.0f ns", ns)
}

// count writes n per per (one decimal if per is not 1), or "—" if n was
// not measured (ok false: results of a run from before it was).
func count(n float64, ok bool, per float64) string {
	switch {
	case !ok:
		return "—"
	case per == 1:
		return fmt.Sprintf("%.0f", n)
	}
	return fmt.Sprintf("%.1f", n/per)
}

func size(b float64) string {
	switch {
	case math.Abs(b) >= 1<<20:
		return fmt.Sprintf("%.1f MiB", b/(1<<20))
	case math.Abs(b) >= 1<<10:
		return fmt.Sprintf("%.2f KiB", b/(1<<10))
	}
	return fmt.Sprintf("%.0f B", b)
}
