package main

import (
	"bytes"
	"fmt"
)

// target is one of the targets of the issue that asked for these
// benchmarks, with what was measured.
type target struct {
	name     string
	measured string
	met      bool
}

func (r *report) targets() string {
	var ts []target
	reads, ingest, view, sync := r.results["reads"], r.results["ingest"], r.results["typedview"], r.results["sync"]
	for _, bench := range benches(reads) {
		ns, _ := median(reads, bench, "generic-typed", "ns/op")
		base, _ := median(reads, bench, "client-go", "ns/op")
		allocs, _ := median(reads, bench, "generic-typed", "allocs/op")
		baseAllocs, _ := median(reads, bench, "client-go", "allocs/op")
		ts = append(ts, target{
			name:     fmt.Sprintf("%s: within 5%% of client-go's generated lister, no more allocations", bench),
			measured: fmt.Sprintf("%s vs %s (%s), %.0f vs %.0f allocs/op", duration(ns), duration(base), ratio(ns, base), allocs, baseAllocs),
			met:      ns <= base*1.05 && allocs <= baseAllocs,
		})
	}
	getNs, _ := median(reads, "ReadGet", "generic-typed", "ns/op")
	crNs, _ := median(reads, "ReadGet", "controller-runtime", "ns/op")
	ts = append(ts, target{
		name:     "ReadGet: at least 10× faster than controller-runtime's deep-copying Get",
		measured: fmt.Sprintf("%s vs %s (%.1f× faster)", duration(getNs), duration(crNs), crNs/getNs),
		met:      crNs >= 10*getNs,
	})
	gen, _ := median(ingest, "Ingest", "generic", "ns/op")
	cg, _ := median(ingest, "Ingest", "client-go", "ns/op")
	ts = append(ts, target{
		name:     "Ingest: within 10% of client-go's SharedIndexInformer",
		measured: fmt.Sprintf("%s vs %s (%s)", duration(gen), duration(cg), ratio(gen, cg)),
		met:      gen <= cg*1.10,
	})
	atNs, _ := median(view, "TypedViewRead", "convert-at-ingest", "ns/op")
	perNs, _ := median(view, "TypedViewRead", "convert-per-read", "ns/op")
	atAllocs, _ := median(view, "TypedViewRead", "convert-at-ingest", "allocs/op")
	perAllocs, _ := median(view, "TypedViewRead", "convert-per-read", "allocs/op")
	ts = append(ts, target{
		name:     "Typed view: converting at ingest reads with at least 5× fewer allocations and ns than converting per read",
		measured: fmt.Sprintf("%.1f× fewer ns (%s vs %s), %.1f× fewer allocations (%.0f vs %.0f)", perNs/atNs, duration(atNs), duration(perNs), perAllocs/max(atAllocs, 1), atAllocs, perAllocs),
		met:      perNs >= 5*atNs && perAllocs >= 5*atAllocs,
	})
	for _, bench := range benches(sync) {
		for _, pair := range [][2]string{{"generic-typed", "client-go-typed"}, {"generic-unstructured", "client-go-dynamic"}} {
			sec, _ := median(sync, bench, pair[0], "ns/op")
			base, _ := median(sync, bench, pair[1], "ns/op")
			ts = append(ts, target{
				name:     fmt.Sprintf("%s: %s within 10%% of %s", bench, pair[0], pair[1]),
				measured: fmt.Sprintf("%s vs %s (%s)", duration(sec), duration(base*1e9), ratio(sec, base)),
				met:      sec <= base*1.10,
			})
		}
	}
	for _, resource := range []string{"configmaps", "widgets"} {
		bench := "Sync/resource=" + resource + "/watchlist=on"
		typedMem, _ := median(sync, bench, "generic-typed", "B/object")
		baseMem, _ := median(sync, bench, "client-go-typed", "B/object")
		ts = append(ts, target{
			name:     fmt.Sprintf("Memory (%s): typed no more than client-go typed", resource),
			measured: fmt.Sprintf("%s vs %s per object (%s)", size(typedMem), size(baseMem), ratio(typedMem, baseMem)),
			met:      typedMem <= baseMem,
		})
	}
	var b bytes.Buffer
	b.WriteString("| target | measured | met |\n|---|---|---|\n")
	for _, t := range ts {
		met := "missed"
		if t.met {
			met = "met"
		}
		fmt.Fprintf(&b, "| %s | %s | %s |\n", t.name, t.measured, met)
	}
	return b.String()
}
