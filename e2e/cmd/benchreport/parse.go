package main

import (
	"bufio"
	"bytes"
	"slices"
	"strconv"
	"strings"
)

// result is one line of `go test -bench` output.
type result struct {
	// bench is the benchmark's name less its contender and GOMAXPROCS
	// suffix: "ReadGet", "Sync/resource=widgets/watchlist=on".
	bench      string
	contender  string
	iterations int
	values     map[string]float64 // unit -> value
}

func parse(output []byte) []result {
	var results []result
	scanner := bufio.NewScanner(bytes.NewReader(output))
	for scanner.Scan() {
		fields := strings.Fields(scanner.Text())
		if len(fields) < 4 || !strings.HasPrefix(fields[0], "Benchmark") {
			continue
		}
		name := strings.TrimPrefix(fields[0], "Benchmark")
		if i := strings.LastIndex(name, "-"); i > 0 {
			if _, err := strconv.Atoi(name[i+1:]); err == nil {
				name = name[:i]
			}
		}
		r := result{values: map[string]float64{}}
		var parts []string
		for _, part := range strings.Split(name, "/") {
			if c, ok := strings.CutPrefix(part, "contender="); ok {
				r.contender = c
			} else {
				parts = append(parts, part)
			}
		}
		r.bench = strings.Join(parts, "/")
		r.iterations, _ = strconv.Atoi(fields[1])
		for i := 2; i+1 < len(fields); i += 2 {
			v, err := strconv.ParseFloat(fields[i], 64)
			if err == nil {
				r.values[fields[i+1]] = v
			}
		}
		results = append(results, r)
	}
	return results
}

// median is the median of unit over the results of bench and contender; ok
// is false if there is none.
func median(results []result, bench, contender, unit string) (float64, bool) {
	vs := samples(results, bench, contender, unit)
	return medianOf(vs), len(vs) > 0
}

// medianOf is the median of vs, 0 if vs is empty.
func medianOf(vs []float64) float64 {
	if len(vs) == 0 {
		return 0
	}
	vs = slices.Clone(vs)
	slices.Sort(vs)
	if len(vs)%2 == 1 {
		return vs[len(vs)/2]
	}
	return (vs[len(vs)/2-1] + vs[len(vs)/2]) / 2
}

// benches returns the benchmark names of results, in order of appearance.
func benches(results []result) []string {
	var names []string
	for _, r := range results {
		if !slices.Contains(names, r.bench) {
			names = append(names, r.bench)
		}
	}
	return names
}

// contenderOrder is the order of the contenders in tables and charts
// (BenchmarkSync runs them in a rotating order).
var contenderOrder = []string{
	"generic", "generic-typed", "generic-typed-stripped", "generic-unstructured", "generic-unstructured-stripped", "generic-unstructured-dropin",
	"client-go", "client-go-typed", "client-go-inplace", "client-go-dynamiclister", "client-go-dynamic",
	"controller-runtime", "controller-runtime-nodeepcopy", "ctrlcache", "ctrlcache-compact", "convert-at-ingest", "convert-per-read",
}

// contenders returns the contenders of results, in contenderOrder, then
// any other in order of appearance.
func contenders(results []result) []string {
	var seen []string
	for _, r := range results {
		if !slices.Contains(seen, r.contender) {
			seen = append(seen, r.contender)
		}
	}
	var names []string
	for _, c := range contenderOrder {
		if slices.Contains(seen, c) {
			names = append(names, c)
		}
	}
	for _, c := range seen {
		if !slices.Contains(names, c) {
			names = append(names, c)
		}
	}
	return names
}
