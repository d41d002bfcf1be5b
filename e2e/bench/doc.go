// Package bench measures this library side by side with client-go and
// controller-runtime, in the same run on the same machine: reads from the
// cache, ingest of watch events, and the initial sync (time and memory) from
// a real, embedded kube-apiserver. cmd/benchreport runs it and writes
// docs/benchmarks.md.
//
// The size is BENCH_OBJECTS objects (default 10000): Pods for the reads and
// the ingest (10 times as many events), ConfigMaps and Widgets of about
// 2 KiB for the sync.
//
//	BENCH_OBJECTS=500 go test ./bench -run '^$' -bench . -benchtime 1x
//
// The read benchmarks' caches stay filled for the rest of their process
// (see readCaches): cmd/benchreport runs each group of benchmarks in a
// process of its own, so that none runs beside another's heap.
package bench
