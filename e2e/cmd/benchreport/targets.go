package main

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"golang.org/x/perf/benchmath"
)

// target is one of the targets of the issue that asked for these
// benchmarks, with what was measured.
type target struct {
	name     string
	measured string
	verdict  string
}

// Verdicts: a difference benchstat's test (Mann-Whitney U, as benchstat)
// does not find significant is not a miss; where the margin is exceeded and
// the test cannot tell, the result is inconclusive.
const (
	met          = "met"
	missed       = "missed"
	inconclusive = "inconclusive (noise larger than the margin)"
	notMeasured  = "not measured"
)

// samples returns the values of unit over the runs of bench and contender.
func samples(results []result, bench, contender, unit string) []float64 {
	var vs []float64
	for _, r := range results {
		if r.bench == bench && r.contender == contender {
			if v, ok := r.values[unit]; ok {
				vs = append(vs, v)
			}
		}
	}
	return vs
}

// pValue is the p-value of the two samples coming from one distribution.
func pValue(a, b []float64) float64 {
	if len(a) == 0 || len(b) == 0 {
		return 1
	}
	return benchmath.AssumeNothing.Compare(
		benchmath.NewSample(a, &benchmath.DefaultThresholds),
		benchmath.NewSample(b, &benchmath.DefaultThresholds)).P
}

// within judges "a's median is at most (1+margin) times b's".
func within(results []result, bench, a, b, unit string, margin float64) (string, string) {
	ma, _ := median(results, bench, a, unit)
	mb, _ := median(results, bench, b, unit)
	p := pValue(samples(results, bench, a, unit), samples(results, bench, b, unit))
	detail := fmt.Sprintf("%s; p=%.3f", ratio(ma, mb), p)
	switch {
	case ma <= mb*(1+margin):
		return met, detail
	case p >= 0.05:
		return inconclusive, detail
	}
	return missed, detail
}

// targetList judges every target on the run's results.
func (r *report) targetList() []target {
	var ts []target
	reads, ingest, view, sync := r.results["reads"], r.results["ingest"], r.results["typedview"], r.results["sync"]
	for _, bench := range benches(reads) {
		if isInterleaved(bench) {
			continue // its contenders are metrics, judged in unstructuredTargets
		}
		ns, _ := median(reads, bench, "generic-typed", "ns/op")
		base, _ := median(reads, bench, "client-go", "ns/op")
		allocs, _ := median(reads, bench, "generic-typed", "allocs/op")
		baseAllocs, _ := median(reads, bench, "client-go", "allocs/op")
		verdict, detail := within(reads, bench, "generic-typed", "client-go", "ns/op", 0.05)
		measured := fmt.Sprintf("%s vs %s (%s)", duration(ns), duration(base), detail)
		if cold, warm, ok := interleavedRead(reads, bench, "generic-typed", "client-go"); ok {
			verdict = worst(cold.verdict(1.05), warm.verdict(1.05))
			measured = fmt.Sprintf("interleaved: cold %s; warm %s (one after the other: %s)", cold, warm, measured)
		}
		if allocs > baseAllocs {
			verdict = missed
		}
		ts = append(ts, target{
			name:     fmt.Sprintf("%s: within 5%% of client-go's generated lister, no more allocations", bench),
			measured: fmt.Sprintf("%s, %.0f vs %.0f allocs/op", measured, allocs, baseAllocs),
			verdict:  verdict,
		})
	}
	getNs, _ := median(reads, "ReadGet", "generic-typed", "ns/op")
	crNs, _ := median(reads, "ReadGet", "controller-runtime", "ns/op")
	ts = append(ts, target{
		name:     "ReadGet: at least 10× faster than controller-runtime's deep-copying Get",
		measured: fmt.Sprintf("%s vs %s (%.1f× faster)", duration(getNs), duration(crNs), crNs/getNs),
		verdict:  verdictOf(crNs >= 10*getNs),
	})
	gen, _ := median(ingest, "Ingest", "generic", "ns/op")
	cg, _ := median(ingest, "Ingest", "client-go", "ns/op")
	verdict, detail := within(ingest, "Ingest", "generic", "client-go", "ns/op", 0.10)
	ts = append(ts, target{
		name:     "Ingest: within 10% of client-go's SharedIndexInformer",
		measured: fmt.Sprintf("%s vs %s (%s)", duration(gen), duration(cg), detail),
		verdict:  verdict,
	})
	atNs, _ := median(view, "TypedViewRead", "convert-at-ingest", "ns/op")
	perNs, _ := median(view, "TypedViewRead", "convert-per-read", "ns/op")
	atAllocs, _ := median(view, "TypedViewRead", "convert-at-ingest", "allocs/op")
	perAllocs, _ := median(view, "TypedViewRead", "convert-per-read", "allocs/op")
	ts = append(ts, target{
		name:     "Typed view: converting at ingest reads with at least 5× fewer allocations and ns than converting per read",
		measured: fmt.Sprintf("%.1f× fewer ns (%s vs %s), %.1f× fewer allocations (%.0f vs %.0f)", perNs/atNs, duration(atNs), duration(perNs), perAllocs/max(atAllocs, 1), atAllocs, perAllocs),
		verdict:  verdictOf(perNs >= 5*atNs && perAllocs >= 5*atAllocs),
	})
	for _, bench := range benches(sync) {
		for _, pair := range []struct{ a, b, group, prefix string }{
			{"generic-typed", "client-go-typed", "syncinterleaved", syncInterleavedBench},
			{"generic-unstructured-dropin", "client-go-dynamic", "syncinterleaveddropin", syncInterleavedDropInBench},
		} {
			sec, _ := median(sync, bench, pair.a, "ns/op")
			base, _ := median(sync, bench, pair.b, "ns/op")
			verdict, detail := within(sync, bench, pair.a, pair.b, "ns/op", 0.10)
			measured := fmt.Sprintf("%s vs %s (%s)", duration(sec), duration(base), detail)
			// Judged on the interleaved runs where there are any (see
			// BenchmarkSyncInterleaved).
			paired := pairedRatioOf(r.results[pair.group], pair.prefix+strings.TrimPrefix(bench, "Sync/"), pair.a, pair.b)
			if paired.runs > 0 {
				verdict = paired.verdict(1.10)
				measured = fmt.Sprintf("interleaved: %s (one after the other: %s)", paired, measured)
			}
			ts = append(ts, target{
				name:     fmt.Sprintf("%s: %s within 10%% of %s", bench, pair.a, pair.b),
				measured: measured,
				verdict:  verdict,
			})
		}
	}
	for _, resource := range []string{"configmaps", "widgets"} {
		bench := "Sync/resource=" + resource + "/watchlist=on"
		typedMem, _ := median(sync, bench, "generic-typed", "B/object")
		baseMem, _ := median(sync, bench, "client-go-typed", "B/object")
		verdict, detail := within(sync, bench, "generic-typed", "client-go-typed", "B/object", 0)
		if verdict == inconclusive {
			verdict = met + " (no significant difference)"
		}
		ts = append(ts, target{
			name:     fmt.Sprintf("Memory (%s): typed no more than client-go typed", resource),
			measured: fmt.Sprintf("%s vs %s per object (%s)", size(typedMem), size(baseMem), detail),
			verdict:  verdict,
		})
	}
	ts = append(ts, r.reconcileTarget())
	ts = append(ts, r.unstructuredTargets()...)
	ts = append(ts, r.dropInReadTargets()...)
	ts = append(ts, r.sharedReadTargets()...)
	ts = append(ts, r.cacheSizeTargets()...)
	ts = append(ts, r.compactStoreTargets()...)
	ts = append(ts, r.managerCacheTargets()...)
	ts = append(ts, r.managerReadTargets()...)
	return append(ts, r.growthTargets()...)
}

// targets renders targetList as the report's table.
func (r *report) targets() string {
	ts := r.targetList()
	var b bytes.Buffer
	b.WriteString("p is the p-value of benchstat's test that the two samples are alike; a difference with p ≥ 0.05 is noise. ")
	b.WriteString("Where the contenders of a target also ran interleaved (in turn within every iteration, under the same conditions; see the interleaved sections), the target is judged on those runs: the median of the ratios within each run, met if it is within the limit, missed if every run's ratio is over it, inconclusive otherwise. The cache-size targets, where their runs are too few for the test to tell two samples apart (fewer than 4 each), are judged on the ratio of the medians alone (see Cache size).\n\n")
	b.WriteString("| target | measured | verdict |\n|---|---|---|\n")
	for _, t := range ts {
		fmt.Fprintf(&b, "| %s | %s | %s |\n", t.name, t.measured, t.verdict)
	}
	return b.String()
}

// interleavedRead returns a's time over b's in BenchmarkReadInterleaved's
// runs of the read of bench ("ReadList": List), cold and warm, and whether
// there are any.
func interleavedRead(reads []result, bench, a, b string) (cold, warm pairedRatio, ok bool) {
	read, isRead := strings.CutPrefix(bench, "Read")
	if !isRead {
		return pairedRatio{}, pairedRatio{}, false
	}
	cold = pairedRatioOf(reads, interleavedName(read, "cold"), a, b)
	warm = pairedRatioOf(reads, interleavedName(read, "warm"), a, b)
	return cold, warm, cold.runs > 0 && warm.runs > 0
}

// worst returns the worst of verdicts: not measured, then missed, then
// inconclusive, then met.
func worst(verdicts ...string) string {
	for _, v := range []string{notMeasured, missed, inconclusive} {
		if slices.Contains(verdicts, v) {
			return v
		}
	}
	return met
}

func verdictOf(ok bool) string {
	if ok {
		return met
	}
	return missed
}
