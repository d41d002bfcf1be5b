package main

import (
	"fmt"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// charts draws sync.png (time to sync) and memory.png (bytes per cached
// object): a group of bars per contender, a bar per resource and WatchList
// mode.
func (r *report) charts(dir string) error {
	sync := r.results["sync"]
	names := contenders(sync)
	if err := barChart(filepath.Join(dir, "sync.png"), "Time to sync (ms)", names, sync, "ns/op", 1e-6); err != nil {
		return err
	}
	return barChart(filepath.Join(dir, "memory.png"), "Live heap per cached object (KiB)", names, sync, "B/object", 1.0/1024)
}

func barChart(path, title string, names []string, results []result, unit string, scale float64) error {
	p := plot.New()
	p.Title.Text = title
	p.Legend.Top = true
	width := vg.Points(10)
	series := benches(results)
	for i, bench := range series {
		values := make(plotter.Values, len(names))
		for j, c := range names {
			v, _ := median(results, bench, c, unit)
			values[j] = v * scale
		}
		bars, err := plotter.NewBarChart(values, width)
		if err != nil {
			return err
		}
		bars.LineStyle.Width = vg.Length(0)
		bars.Color = plotutil.Color(i)
		bars.Offset = vg.Length(float64(i)-float64(len(series)-1)/2) * width
		p.Add(bars)
		p.Legend.Add(strings.ReplaceAll(strings.TrimPrefix(bench, "Sync/"), "/", ", "), bars)
	}
	short := make([]string, len(names))
	for i, n := range names {
		short[i] = strings.ReplaceAll(n, "-", "\n")
	}
	p.NominalX(short...)
	if err := p.Save(11*vg.Inch, 5*vg.Inch, path); err != nil {
		return fmt.Errorf("chart %s: %w", path, err)
	}
	return nil
}
