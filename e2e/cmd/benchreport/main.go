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
// interval; BenchmarkCacheSize runs at most cacheSizeMaxCount times);
// -scaling the sizes of the scaling runs (default 1000,10000,100000; ""
// for none): BenchmarkSync's ConfigMaps (scaling.go) and
// BenchmarkCacheSize's realistic Pods (growth.go).
//
// -only and -reuse rerun some runs and take the others from an earlier
// run's raw output (reuse.go): -only is a regular expression over the runs'
// names (the groups' below, "scaling-<size>" and "growth-<size>"), and
// -reuse the earlier raw.txt. For example, to rerun the growth runs:
//
//	go -C e2e run ./cmd/benchreport -only '^growth-' -reuse /tmp/raw.txt
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

func main() {
	objects := flag.Int("objects", 10000, "objects per benchmark (BENCH_OBJECTS)")
	count := flag.Int("count", 6, "runs of each benchmark (-count)")
	out := flag.String("out", "../docs", "where to write benchmarks.md and benchmarks/")
	scaling := flag.String("scaling", "1000,10000,100000", "sizes of the scaling runs (sync of ConfigMaps, cache size of realistic Pods), comma-separated; empty: none")
	only := flag.String("only", "", "a regular expression: run only the runs whose name matches, and take the others from -reuse")
	reuse := flag.String("reuse", "", "raw output of an earlier run (its benchmarks/raw.txt), for the runs -only leaves out")
	flag.Parse()
	sizes, err := parseSizes(*scaling)
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchreport: -scaling:", err)
		os.Exit(2)
	}
	src, err := newSource(*only, *reuse)
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchreport:", err)
		os.Exit(2)
	}
	if err := run(*objects, *count, sizes, *out, src); err != nil {
		fmt.Fprintln(os.Stderr, "benchreport:", err)
		os.Exit(1)
	}
}

// groups are the benchmark runs, each with the -benchtime that suits it.
var groups = []group{
	{name: "reads", pattern: "^BenchmarkRead(Get|List|NamespaceList|ByIndex|Interleaved)$", benchtime: "300ms"},
	{name: "ingest", pattern: "^BenchmarkIngest$", benchtime: "3x"},
	{name: "typedview", pattern: "^BenchmarkTypedViewRead$", benchtime: "300ms"},
	{name: "sync", pattern: "^BenchmarkSync$", benchtime: "1x"},
	// Three iterations: each contender syncs first once (see rotate).
	{name: "syncinterleaved", pattern: "^BenchmarkSyncInterleaved$", benchtime: "3x"},
	// Two contenders, two iterations: each syncs first once.
	{name: "syncinterleaveddropin", pattern: "^BenchmarkSyncInterleavedDropIn$", benchtime: "2x"},
	{name: "sharding", pattern: "^BenchmarkShardedSync$", benchtime: "1x"},
	{name: "readyourwrites", pattern: "^BenchmarkWaitForWrite$", benchtime: "1000x"},
	{name: "metrics", pattern: "^BenchmarkIngestMetrics$", benchtime: "3x"},
	{name: "reconcile", pattern: "^BenchmarkReconcile$", benchtime: "3x"},
	// One op is one child process per contender and resource; a run takes
	// about 10 minutes at 10,000 objects.
	{name: "cachesize", pattern: "^BenchmarkCacheSize$", benchtime: "1x", maxCount: cacheSizeMaxCount},
	// Seeds the realistic Pods again (a process of its own): about four
	// minutes at 10,000 objects, then the reads.
	{name: "compactread", pattern: "^BenchmarkCompactRead$", benchtime: "2000x", maxCount: cacheSizeMaxCount},
}

// failure says that run name failed with err, in a line of the report
// (the run's output, which err carries, goes to the standard error).
func failure(name string, err error) string {
	fmt.Fprintf(os.Stderr, "benchreport: %s failed: %v\n", name, err)
	first, _, _ := strings.Cut(err.Error(), "\n")
	return fmt.Sprintf("%s: %s", name, first)
}

// newSource is the source of -only and -reuse.
func newSource(only, reuse string) (source, error) {
	if only == "" {
		if reuse != "" {
			return source{}, fmt.Errorf("-reuse needs -only: which runs to run now")
		}
		return source{}, nil
	}
	pattern, err := regexp.Compile(only)
	if err != nil {
		return source{}, fmt.Errorf("-only: %w", err)
	}
	src := source{only: pattern}
	if reuse != "" {
		raw, err := os.ReadFile(reuse)
		if err != nil {
			return source{}, fmt.Errorf("-reuse: %w", err)
		}
		if src.reused, err = splitRuns(raw); err != nil {
			return source{}, fmt.Errorf("-reuse %s: %w", reuse, err)
		}
	}
	return src, nil
}

// take gets run name's output from src, and records its results, or
// its failure, or that it was reused.
func (r *report) take(src source, name string, run func() ([]byte, error)) (runOutput, error) {
	o, reused, err := src.get(name, run)
	if err != nil {
		r.failed = append(r.failed, failure(name, err))
		return runOutput{}, err
	}
	if reused {
		r.reused = append(r.reused, o)
	}
	r.results[name] = parse(o.output)
	return o, nil
}

// parseSizes reads -scaling.
func parseSizes(s string) ([]int, error) {
	if s == "" {
		return nil, nil
	}
	var sizes []int
	for _, field := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(field))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%q is not a size", field)
		}
		sizes = append(sizes, n)
	}
	return sizes, nil
}

func run(objects, count int, sizes []int, out string, src source) error {
	started := time.Now()
	if err := os.MkdirAll(filepath.Join(out, "benchmarks"), 0o755); err != nil {
		return err
	}
	r := &report{objects: objects, count: count, scaling: sizes, results: map[string][]result{}, benchstat: map[string]string{}}
	var raw []byte
	for _, g := range groups {
		n := g.count(count)
		o, err := r.take(src, g.name, func() ([]byte, error) {
			fmt.Fprintf(os.Stderr, "benchreport: running %s (%s, -count %d, %d objects)\n", g.name, g.pattern, n, objects)
			return g.run(objects, n)
		})
		if err != nil {
			// The others go on: a run of the whole set takes most of
			// an hour and a half, and one failure should not cost the
			// rest.
			continue
		}
		raw = append(raw, o.raw()...)
		if r.benchstat[g.name], err = benchstat(o.output); err != nil {
			return err
		}
	}
	if len(sizes) > 0 {
		raw = append(raw, r.runScaling(src, sizes)...)
	}
	rawPath := filepath.Join(out, "benchmarks", "raw.txt")
	if err := os.WriteFile(rawPath, raw, 0o644); err != nil {
		return err
	}
	r.took = time.Since(started)
	if err := r.charts(filepath.Join(out, "benchmarks")); err != nil {
		return err
	}
	if err := r.scalingCharts(filepath.Join(out, "benchmarks")); err != nil {
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
