// Command benchreport runs the benchmarks of e2e/bench, in one run on this
// machine, and writes docs/benchmarks.md: the machine, the versions, a table
// per benchmark with every contender and its ratio to client-go, whether the
// targets are met, charts of the sync and memory results, and benchstat's
// tables of the raw output (which it writes to docs/benchmarks/raw.txt).
//
// Run it from the repository root:
//
//	go -C e2e run ./cmd/benchreport
//
// -objects sets the size (default 10000) and -count the runs of each
// benchmark (default 6; benchstat needs at least 6 for a confidence
// interval).
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

func main() {
	objects := flag.Int("objects", 10000, "objects per benchmark (BENCH_OBJECTS)")
	count := flag.Int("count", 6, "runs of each benchmark (-count)")
	out := flag.String("out", "../docs", "where to write benchmarks.md and benchmarks/")
	flag.Parse()
	if err := run(*objects, *count, *out); err != nil {
		fmt.Fprintln(os.Stderr, "benchreport:", err)
		os.Exit(1)
	}
}

// groups are the benchmark runs, each with the -benchtime that suits it.
var groups = []group{
	{name: "reads", pattern: "^BenchmarkRead(Get|List|NamespaceList|ByIndex)$", benchtime: "300ms"},
	{name: "ingest", pattern: "^BenchmarkIngest$", benchtime: "3x"},
	{name: "typedview", pattern: "^BenchmarkTypedViewRead$", benchtime: "300ms"},
	{name: "sync", pattern: "^BenchmarkSync$", benchtime: "1x"},
	{name: "sharding", pattern: "^BenchmarkShardedSync$", benchtime: "1x"},
	{name: "readyourwrites", pattern: "^BenchmarkWaitForWrite$", benchtime: "1000x"},
	{name: "metrics", pattern: "^BenchmarkIngestMetrics$", benchtime: "3x"},
}

func run(objects, count int, out string) error {
	started := time.Now()
	if err := os.MkdirAll(filepath.Join(out, "benchmarks"), 0o755); err != nil {
		return err
	}
	var raw []byte
	results := map[string][]result{}
	stats := map[string]string{}
	for _, g := range groups {
		fmt.Fprintf(os.Stderr, "benchreport: running %s (%s, -count %d, %d objects)\n", g.name, g.pattern, count, objects)
		output, err := g.run(objects, count)
		if err != nil {
			return err
		}
		raw = append(raw, output...)
		results[g.name] = parse(output)
		if stats[g.name], err = benchstat(output); err != nil {
			return err
		}
	}
	rawPath := filepath.Join(out, "benchmarks", "raw.txt")
	if err := os.WriteFile(rawPath, raw, 0o644); err != nil {
		return err
	}
	r := &report{objects: objects, count: count, results: results, benchstat: stats, took: time.Since(started)}
	if err := r.charts(filepath.Join(out, "benchmarks")); err != nil {
		return err
	}
	md, err := r.markdown()
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, "benchmarks.md"), md, 0o644); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "benchreport: wrote %s and %s in %v\n", filepath.Join(out, "benchmarks.md"), rawPath, time.Since(started).Round(time.Second))
	return nil
}
