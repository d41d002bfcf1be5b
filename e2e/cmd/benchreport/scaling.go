package main

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// Issue 12's cost as the cluster grows: BenchmarkSync's ConfigMaps
// (WatchList on) at each size, once, for the typed, the unstructured and
// client-go's dynamic informer. Growing linearly is a flat line of time
// and heap per object.

const scalingBench = "Sync/resource=configmaps/watchlist=on"

var scalingContenders = []string{"generic-typed", "generic-unstructured", "client-go-dynamic"}

// sizedRun is a run of one benchmark at each size of the report's scaling
// sizes: its results are under results["<prefix>-<size>"].
type sizedRun struct {
	prefix, bench string
	contenders    []string
}

// configMapsScaling is issue 12's scaling run; podsGrowth (growth.go)
// issue 27's.
var configMapsScaling = sizedRun{"scaling", scalingBench, scalingContenders}

// scalingGroup is the run at one size.
func scalingGroup() group {
	return group{
		name:      "scaling",
		pattern:   "^BenchmarkSync$/^resource=configmaps$/^watchlist=on$/^contender=(generic-typed|generic-unstructured|client-go-dynamic)$",
		benchtime: "1x",
	}
}

// scalingCount is how many times the scaling run syncs each contender at
// each size: the table gives the median, so that one slow run (a GC at the
// wrong moment, the machine's other work) does not pass for growth.
const scalingCount = 3

// runScaling runs scalingGroup at each size, scalingCount times, and
// growthGroup once (or takes them from src); the results of each size are
// under r.results["scaling-<size>"] and r.results["growth-<size>"]. A run
// that fails is listed in r.failed, and the others go on. It returns their
// raw output.
func (r *report) runScaling(src source, sizes []int) []byte {
	var raw []byte
	for _, run := range []struct {
		prefix string
		group  group
		count  int
	}{
		{configMapsScaling.prefix, scalingGroup(), scalingCount},
		{podsGrowth.prefix, growthGroup(), growthCount},
	} {
		for _, size := range sizes {
			o, err := r.take(src, run.prefix+"-"+strconv.Itoa(size), func() ([]byte, error) {
				fmt.Fprintf(os.Stderr, "benchreport: running %s at %d objects\n", run.prefix, size)
				return run.group.run(size, run.count)
			})
			if err == nil {
				raw = append(raw, o.raw()...)
			}
		}
	}
	return raw
}

// scalingSection is the table and the charts, if the sizes ran.
func (r *report) scalingSection(w func(format string, args ...any), b *bytes.Buffer) {
	if len(r.scaling) == 0 {
		return
	}
	w("## Cost as the cluster grows\n\n")
	w("BenchmarkSync's ConfigMaps (WatchList on) at each size, the median of %d runs (a seeded server of its own per size): the time to sync, and the live heap per cached object. Growth is linear where a contender's line is flat. The time is measured twice: in the benchmark's process, which holds the embedded kube-apiserver and etcd (at 100,000 ConfigMaps and as many Widgets, a live heap of about 1.5 GB when this was written, that every garbage collection during the sync marks: seconds per cycle on two cores, with GODEBUG=gctrace=1), and alone, in the child process that measures the heap, which holds the client only, as a controller's process does; the server, in the parent, still shares the CPUs, and the child's sync is the first in its process. The allocations are the child's too: the client's alone, which do not vary with the server's load as the time does. The chart is of the time alone.\n\n", scalingCount)
	b.WriteString("| contender | objects | time to sync, with the server | per object | time to sync, alone | per object | allocations alone, per object | heap per object |\n|---|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, c := range scalingContenders {
		for _, n := range r.scaling {
			results := r.results["scaling-"+strconv.Itoa(n)]
			ns, ok := median(results, scalingBench, c, "ns/op")
			if !ok {
				continue
			}
			alone, _ := median(results, scalingBench, c, "alone-ns/op")
			allocs, allocsOK := median(results, scalingBench, c, "alone-allocs/op")
			heap, _ := median(results, scalingBench, c, "B/object")
			fmt.Fprintf(b, "| %s | %d | %s | %s | %s | %s | %s | %s |\n", c, n, duration(ns), duration(ns/float64(n)),
				duration(alone), duration(alone/float64(n)), count(allocs, allocsOK, float64(n)), size(heap))
		}
	}
	b.WriteString("\n![Sync time per object](benchmarks/scaling-time.png)\n\n![Heap per object](benchmarks/scaling-heap.png)\n\n")
}

// scalingCharts draws time and heap per object against the size, for
// each sized run.
func (r *report) scalingCharts(dir string) error {
	if len(r.scaling) == 0 {
		return nil
	}
	for _, run := range []sizedRun{configMapsScaling, podsGrowth} {
		if err := r.sizeChart(filepath.Join(dir, run.prefix+"-time.png"), "Time to sync per object, the client alone in its process (µs)", run, "alone-ns/op", 1e-3, true); err != nil {
			return err
		}
		if err := r.sizeChart(filepath.Join(dir, run.prefix+"-heap.png"), "Live heap per object (KiB)", run, "B/object", 1.0/1024, false); err != nil {
			return err
		}
	}
	return nil
}

func (r *report) sizeChart(path, title string, run sizedRun, unit string, scale float64, perObject bool) error {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "objects"
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	p.Legend.Top = true
	for i, c := range run.contenders {
		var points plotter.XYs
		for _, size := range r.scaling {
			v, ok := median(r.results[run.prefix+"-"+strconv.Itoa(size)], run.bench, c, unit)
			if !ok {
				continue
			}
			if perObject {
				v /= float64(size)
			}
			points = append(points, plotter.XY{X: float64(size), Y: v * scale})
		}
		if len(points) == 0 {
			continue
		}
		line, dots, err := plotter.NewLinePoints(points)
		if err != nil {
			return err
		}
		line.Color, dots.Color = plotutil.Color(i), plotutil.Color(i)
		p.Add(line, dots)
		p.Legend.Add(c, line)
	}
	p.Y.Min = 0
	p.Y.Max = math.Max(p.Y.Max*1.1, 1)
	if err := p.Save(8*vg.Inch, 4*vg.Inch, path); err != nil {
		return fmt.Errorf("chart %s: %w", path, err)
	}
	return nil
}
