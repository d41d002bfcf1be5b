package kwatch_test

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/generic-informers/generic/e2e/internal/kwatch"
)

// demoObjects is how many more ConfigMaps the metrics test's demo syncs.
const demoObjects = 300

// TestDemoMetrics runs the demo with --metrics-addr and --demo-objects,
// scrapes the endpoint once the script is done, and checks that the
// metrics add up to what the demo did: its initial objects, and the events
// its summary counts.
func TestDemoMetrics(t *testing.T) {
	want, err := kwatch.DemoExpected(testdata, demoObjects)
	if err != nil {
		t.Fatal(err)
	}
	initial, err := kwatch.DemoInitial(testdata, demoObjects)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	var scraped map[string]*dto.MetricFamily
	var scrapeErr error
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	got, err := kwatch.Run(ctx, kwatch.Options{
		Testdata: testdata, Out: &out, DemoObjects: demoObjects, MetricsAddr: "127.0.0.1:0",
		AfterWatch: func(url string) { scraped, scrapeErr = scrape(url) },
	})
	if err != nil {
		t.Fatalf("demo: %v\n%s", err, out.String())
	}
	if scrapeErr != nil {
		t.Fatal(scrapeErr)
	}
	if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(kwatch.ResourceSummary{}, "SyncTime")); diff != "" {
		t.Errorf("summary (-want +got):\n%s", diff)
	}
	if !strings.Contains(out.String(), "received") {
		t.Errorf("no initial sync progress line:\n%s", out.String())
	}

	for _, r := range got {
		group, resource := "", r.Resource
		if i := strings.Index(r.Resource, "."); i > 0 {
			resource, group = r.Resource[:i], r.Resource[i+1:]
		}
		value := func(name string, extra ...string) float64 {
			return sample(scraped, name, append([]string{"group", group, "resource", resource}, extra...)...)
		}
		t.Run(r.Resource, func(t *testing.T) {
			// Events: the initial objects arrive as adds; every change the
			// handlers saw is an event; the deletes include tombstones.
			gotEvents := map[string]float64{
				"add": value("generic_informer_events_total", "type", "add"), "update": value("generic_informer_events_total", "type", "update"),
				"delete+tombstone": value("generic_informer_events_total", "type", "delete") + value("generic_informer_events_total", "type", "tombstone"),
			}
			wantEvents := map[string]float64{"add": float64(initial[r.Resource] + r.Added), "update": float64(r.Modified), "delete+tombstone": float64(r.Deleted)}
			if diff := cmp.Diff(wantEvents, gotEvents); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			gotGauges := map[string]float64{
				"objects":                       value("generic_informer_objects"),
				"initial_sync_received_objects": value("generic_informer_initial_sync_received_objects"),
				"state Synced":                  value("generic_informer_state", "state", "Synced"),
				"rejected":                      value("generic_informer_rejected_objects_total"),
				"adds - deletes":                gotEvents["add"] - gotEvents["delete+tombstone"],
			}
			wantGauges := map[string]float64{
				"objects":                       float64(r.Cached),
				"initial_sync_received_objects": float64(initial[r.Resource]),
				"state Synced":                  1,
				"rejected":                      0,
				"adds - deletes":                float64(r.Cached),
			}
			if diff := cmp.Diff(wantGauges, gotGauges); diff != "" {
				t.Errorf("gauges (-want +got):\n%s", diff)
			}
			if n := value("generic_informer_requests_total", "request", "watch"); n < 1 {
				t.Errorf("%v watch requests, want 1 or more", n)
			}
			if ts := value("generic_informer_last_sync_timestamp_seconds"); ts < float64(time.Now().Add(-5*time.Minute).Unix()) {
				t.Errorf("last sync at %v, want within the last minutes", ts)
			}
			if n := histogramCount(scraped, "generic_informer_delivery_latency_seconds", "resource", resource); n < 1 {
				t.Errorf("%d delivery latencies observed, want 1 or more", n)
			}
		})
	}
	// The Widget CRD was deleted and re-created: the informer relisted.
	if n := sample(scraped, "generic_informer_relists_total", "group", "example.com", "resource", "widgets"); n < 1 {
		t.Errorf("widgets relisted %v times, want 1 or more", n)
	}
}

func scrape(url string) (map[string]*dto.MetricFamily, error) {
	resp, err := http.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	return parser.TextToMetricFamilies(resp.Body)
}

// find returns the metric of family name whose labels include labels
// (name, value pairs), or nil.
func find(families map[string]*dto.MetricFamily, name string, labels ...string) *dto.Metric {
	family := families[name]
	if family == nil {
		return nil
	}
metrics:
	for _, m := range family.GetMetric() {
		have := map[string]string{}
		for _, l := range m.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		for i := 0; i+1 < len(labels); i += 2 {
			if have[labels[i]] != labels[i+1] {
				continue metrics
			}
		}
		return m
	}
	return nil
}

// sample is the value of a counter or gauge; -1 if there is none.
func sample(families map[string]*dto.MetricFamily, name string, labels ...string) float64 {
	m := find(families, name, labels...)
	switch {
	case m == nil:
		return -1
	case m.GetCounter() != nil:
		return m.GetCounter().GetValue()
	default:
		return m.GetGauge().GetValue()
	}
}

func histogramCount(families map[string]*dto.MetricFamily, name string, labels ...string) uint64 {
	if m := find(families, name, labels...); m != nil {
		return m.GetHistogram().GetSampleCount()
	}
	return 0
}
