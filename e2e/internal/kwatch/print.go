package kwatch

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
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

// printProgress writes one line with how many objects each resource has
// cached so far.
func printProgress(w io.Writer, resources []*resource) {
	parts := make([]string, 0, len(resources))
	for _, r := range resources {
		state := "syncing"
		if r.informer.HasSynced() {
			state = "synced"
		}
		parts = append(parts, fmt.Sprintf("%s: %d cached (%s)", r.name, len(r.informer.GetIndexer().ListKeys()), state))
	}
	fmt.Fprintf(w, "%s  initial sync  %s\n", time.Now().Format("15:04:05.000"), strings.Join(parts, ", "))
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
