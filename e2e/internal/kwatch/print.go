package kwatch

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/generic-informers/generic/typed"
)

// printEvent writes one event: a line of text, or a JSON object.
func printEvent(w io.Writer, output string, e Event) error {
	if output == outputJSON {
		return json.NewEncoder(w).Encode(e)
	}
	if e.Type == StateChanged {
		detail := ""
		if e.Error != "" {
			detail = "(" + e.Error + ")"
		}
		_, err := fmt.Fprintf(w, "%s  %-8s  %-22s  %-28s  %s\n", e.Time.Format("15:04:05.000"), e.Type, e.Resource, e.State, detail)
		return err
	}
	rv := ""
	if e.ResourceVersion != "" {
		rv = "rv=" + e.ResourceVersion
	}
	if e.Tombstone {
		rv += " (missed; last known state)"
	}
	_, err := fmt.Fprintf(w, "%s  %-8s  %-22s  %-28s  %s\n", e.Time.Format("15:04:05.000"), e.Type, e.Resource, e.Key(), rv)
	return err
}

// progressPrinter writes the initial sync's progress: at each call, a
// line per resource still syncing (objects received so far, rate,
// elapsed), and one last line for each when it has synced.
type progressPrinter struct {
	w         io.Writer
	factory   *typed.Factory
	resources []*resource
	done      map[string]bool
}

func newProgressPrinter(w io.Writer, factory *typed.Factory, resources []*resource) *progressPrinter {
	return &progressPrinter{w: w, factory: factory, resources: resources, done: map[string]bool{}}
}

func (p *progressPrinter) print() {
	statuses := p.factory.Statuses()
	now := time.Now().Format("15:04:05.000")
	for _, r := range p.resources {
		if p.done[r.name] {
			continue
		}
		progress := statuses[r.gvr].Progress
		state := "syncing"
		if r.informer.HasSynced() {
			p.done[r.name] = true
			state = fmt.Sprintf("synced, %d cached", len(r.informer.GetIndexer().ListKeys()))
		}
		fmt.Fprintf(p.w, "%s  initial sync  %-22s  %7d received  %8.0f/s  %6s  %s\n",
			now, r.name, progress.Received, progress.Rate, progress.Elapsed.Round(time.Millisecond), state)
	}
}

// Summary is what kwatch saw, per resource, in the order the resources were
// named.
type Summary []ResourceSummary

// ResourceSummary counts what kwatch saw of one resource.
type ResourceSummary struct {
	Resource string
	// Cached is how many objects the cache held at the end.
	Cached int
	// Added, Modified and Deleted count the events after the initial sync.
	Added, Modified, Deleted int
	// SyncTime is how long the initial sync took; zero if it never ended.
	SyncTime time.Duration
	// State is the informer's state at the end (generic.State).
	State string
}

// Print writes the summary as a table.
func (s Summary) Print(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RESOURCE\tCACHED\tADDED\tMODIFIED\tDELETED\tSYNCED IN\tSTATE")
	for _, r := range s {
		synced := "never"
		if r.SyncTime > 0 {
			synced = r.SyncTime.Round(time.Millisecond).String()
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%s\t%s\n", r.Resource, r.Cached, r.Added, r.Modified, r.Deleted, synced, r.State)
	}
	return tw.Flush()
}
