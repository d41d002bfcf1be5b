package main

import (
	"bytes"
	"fmt"
)

// The reconcile benchmark (BenchmarkReconcile): this library's controller
// against controller-runtime's, from construction until every primary has
// been reconciled once.

const reconcileBench = "Reconcile"

// reconcileTarget: the library's controller reconciles at least as many
// keys a second as controller-runtime's, that is, takes at most its time.
func (r *report) reconcileTarget() target {
	t := ratioOf(r.results["reconcile"], reconcileBench, "generic", "controller-runtime", "ns/op")
	verdict := t.verdict(1)
	if t.a == 0 {
		verdict = notMeasured
	}
	return target{
		name:     "Reconcile: controller throughput at least controller-runtime's (time ≤ 1× its time)",
		measured: t.String(),
		verdict:  verdict,
	}
}

func (r *report) reconcileSection(w func(format string, args ...any), b *bytes.Buffer) {
	w("## Reconcile throughput\n\n")
	w("%d small ConfigMaps in a namespace of their own are the primaries of a controller whose Reconciler only counts, with 2 workers: `generic` is package `controller` over a typed factory of that namespace (`controller.New(name, controller.For(informer), reconcile, controller.WithWorkers(2))`), `controller-runtime` a manager (cache of that namespace, metrics server and health probes off, no leader election) and `builder.ControllerManagedBy(mgr).For(&corev1.ConfigMap{})` with `MaxConcurrentReconciles: 2`; defaults otherwise. One op is a fresh factory (manager) and controller, from construction until every key has been reconciled once; its shutdown is off the clock. First reconcile: from construction to the first reconcile (the list and the handlers' sync: the workers start after it); drain: the reconciles a second after it. B/op and allocs/op are the benchmark process's, which count the embedded API server's work to serve the list too.\n\n", r.objects)
	r.reconcileTable(b)
}

func (r *report) reconcileTable(b *bytes.Buffer) {
	results := r.results["reconcile"]
	b.WriteString("| contender | time for all keys | vs controller-runtime | reconciles/s | first reconcile | drain reconciles/s | B/op | allocs/op |\n|---|---:|---:|---:|---:|---:|---:|---:|\n")
	base, _ := median(results, reconcileBench, "controller-runtime", "ns/op")
	for _, c := range contenders(results) {
		ns, ok := median(results, reconcileBench, c, "ns/op")
		if !ok {
			continue
		}
		perSecond, _ := median(results, reconcileBench, c, "reconciles/s")
		first, _ := median(results, reconcileBench, c, "first-ns/op")
		drain, _ := median(results, reconcileBench, c, "drain-reconciles/s")
		bytesOp, _ := median(results, reconcileBench, c, "B/op")
		allocs, _ := median(results, reconcileBench, c, "allocs/op")
		fmt.Fprintf(b, "| %s | %s | %s | %.0f | %s | %.0f | %s | %.0f |\n", c, duration(ns), ratio(ns, base), perSecond, duration(first), drain, size(bytesOp), allocs)
	}
	b.WriteString("\n")
}
