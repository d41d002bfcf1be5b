package main

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// compactRuns are made-up runs of BenchmarkCacheSize's typed contenders and
// of BenchmarkCompactRead, one each.
const (
	compactCacheSizeRuns = `
BenchmarkCacheSize/resource=pods/contender=client-go-typed-2 1 1 ns/op 27541 B/object
BenchmarkCacheSize/resource=pods/contender=generic-typed-2 1 1 ns/op 9244 B/object
BenchmarkCacheSize/resource=pods/contender=generic-typed-compact-2 1 1 ns/op 3900 B/object
BenchmarkCacheSize/resource=configmaps-unique/contender=client-go-typed-2 1 1 ns/op 3436 B/object
BenchmarkCacheSize/resource=configmaps-unique/contender=generic-typed-2 1 1 ns/op 2976 B/object
BenchmarkCacheSize/resource=configmaps-unique/contender=generic-typed-compact-2 1 1 ns/op 1500 B/object
`
	compactReadRuns = `
BenchmarkCompactRead/read=get-miss/contender=protobuf-decode-2 2000 40000 ns/op
BenchmarkCompactRead/read=get-miss/contender=generic-typed-2 2000 100 ns/op
BenchmarkCompactRead/read=get-miss/contender=generic-typed-compact-2 2000 44000 ns/op
BenchmarkCompactRead/read=get-miss-paired/contender=generic-typed-compact-2 2000 85000 ns/op 40000 decode-ns 42000 miss-ns
BenchmarkCompactRead/read=get-hot/contender=generic-typed-2 2000 90 ns/op
BenchmarkCompactRead/read=get-hot/contender=generic-typed-compact-2 2000 300 ns/op
BenchmarkCompactRead/read=get-pattern/contender=generic-typed-2 2000 120 ns/op 100 p50-ns 400 p99-ns
BenchmarkCompactRead/read=get-pattern/contender=generic-typed-compact-2 2000 4500 ns/op 350 p50-ns 50000 p99-ns
BenchmarkCompactRead/read=list-selector/contender=generic-typed-2 2000 500000 ns/op
BenchmarkCompactRead/read=list-selector/contender=generic-typed-compact-2 2000 900000 ns/op
`
)

// TestCompactStoreRowsAndTargets renders the compact store's section and
// judges its targets from made-up runs.
func TestCompactStoreRowsAndTargets(t *testing.T) {
	r := &report{objects: 10000, results: map[string][]result{
		"cachesize":   parse([]byte(compactCacheSizeRuns)),
		"compactread": parse([]byte(compactReadRuns)),
	}}
	var b bytes.Buffer
	r.compactStoreSection(func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }, &b)
	want := []string{
		"| realistic Pods | 9244 | 3900 | 0.42× |",
		"| ConfigMaps, payloads of their own | 2976 | 1500 | 0.50× |",
		"| get-miss: `Namespace(ns).Get` of each Pod in turn: every read misses the compact store's decoded objects | 100 ns | 44.00 µs | 440.00× |  |  |",
		"| get-hot: `Get` of each of 1,000 Pods in turn, all read once before (kept decoded) | 90 ns | 300 ns | 3.33× |  |  |",
		"| get-pattern: `Get`, 90% of the reads on 1,000 hot Pods, 10% on the others, at random | 120 ns | 4.50 µs | 37.50× | 100 ns / 350 ns | 400 ns / 50.00 µs |",
		"| list-selector: `List` with a label selector that matches one Deployment's 50 Pods | 500.00 µs | 900.00 µs | 1.80× |  |  |",
		"| one protobuf decode of a Pod | 40.00 µs | | | | |",
	}
	if diff := cmp.Diff(want, tableRows(b.String())); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
	var verdicts []string
	for _, target := range append(r.cacheSizeTargets()[6:], r.compactStoreTargets()...) {
		verdicts = append(verdicts, target.name+": "+target.verdict)
		if target.name == "Compact store: a Get that misses its decoded objects ≤ 1.2× one protobuf decode" {
			verdicts = append(verdicts, "paired: "+target.measured)
		}
	}
	wantVerdicts := []string{
		"Cache size against client-go v0.38's interned managedFields (realistic Pods, issue 40): generic-typed ≤ 0.5× client-go-typed B/object: met",
		"Cache size against client-go v0.38's interned managedFields (ConfigMaps, payloads of their own, issue 40): generic-typed < 0.90× (the ratio before issue 40) client-go-typed B/object: met",
		"Compact store (realistic Pods): generic-typed-compact ≤ 0.5× generic-typed B/object: met",
		"Compact store: a Get that misses its decoded objects ≤ 1.2× one protobuf decode: met",
		"paired: in turn: 1.05× (1.05–1.05× over 1 runs; 42.00 µs vs 40.00 µs); one after the other: 1.10× (44.00 µs vs 40.00 µs; one run each, too few for a p-value)",
		"Compact store: Get p50, 90% of reads on 1,000 hot Pods of all: reported",
	}
	if diff := cmp.Diff(wantVerdicts, verdicts); diff != "" {
		t.Errorf("targets (-want +got):\n%s", diff)
	}
}
