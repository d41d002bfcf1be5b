package genericprometheus_test

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/util/workqueue"

	genericprometheus "github.com/generic-informers/generic/prometheus"
)

// TestWorkqueueMetrics drives a real client-go rate-limited queue through
// Metrics and reads back the counts it must report (not durations, whose
// values depend on timing).
func TestWorkqueueMetrics(t *testing.T) {
	type counts struct{ Adds, Depth, Retries float64 }
	tests := []struct {
		name  string
		drive func(q workqueue.TypedRateLimitingInterface[string])
		want  counts
	}{{
		name:  "two adds of one key, one of another",
		drive: func(q workqueue.TypedRateLimitingInterface[string]) { q.Add("a"); q.Add("a"); q.Add("b") },
		want:  counts{Adds: 2, Depth: 2},
	}, {
		name: "taken and done",
		drive: func(q workqueue.TypedRateLimitingInterface[string]) {
			q.Add("a")
			key, _ := q.Get()
			q.Done(key)
		},
		want: counts{Adds: 1, Depth: 0},
	}, {
		name: "a rate-limited retry",
		drive: func(q workqueue.TypedRateLimitingInterface[string]) {
			q.Add("a")
			key, _ := q.Get()
			q.AddRateLimited(key)
			q.Done(key)
		},
		want: counts{Adds: 1, Depth: 0, Retries: 1},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			metrics := genericprometheus.New()
			q := workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.NewTypedItemExponentialFailureRateLimiter[string](1e9, 1e9),
				workqueue.TypedRateLimitingQueueConfig[string]{Name: "test", MetricsProvider: metrics})
			defer q.ShutDown()
			tc.drive(q)
			labels := prometheus.Labels{"name": "test", "controller": "test"}
			got := counts{
				Adds:    value(t, metrics, "workqueue_adds_total", labels),
				Depth:   value(t, metrics, "workqueue_depth", labels),
				Retries: value(t, metrics, "workqueue_retries_total", labels),
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("queue metrics (-want +got):\n%s", diff)
			}
		})
	}
}

// value gathers metrics and returns the value of the series of name with
// labels.
func value(t *testing.T, metrics *genericprometheus.Metrics, name string, labels prometheus.Labels) float64 {
	t.Helper()
	registry := prometheus.NewPedanticRegistry()
	registry.MustRegister(metrics)
	families, err := registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, family := range families {
		if family.GetName() != name {
			continue
		}
		for _, m := range family.GetMetric() {
			got := prometheus.Labels{}
			for _, l := range m.GetLabel() {
				got[l.GetName()] = l.GetValue()
			}
			if cmp.Equal(labels, got) {
				switch {
				case m.Counter != nil:
					return m.GetCounter().GetValue()
				case m.Gauge != nil:
					return m.GetGauge().GetValue()
				}
			}
		}
	}
	t.Fatalf("no series %s%v", name, labels)
	return 0
}

// TestHandler: the handler serves informer and workqueue metrics, and the
// process's.
func TestHandler(t *testing.T) {
	metrics := genericprometheus.New()
	q := workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: "served", MetricsProvider: metrics})
	defer q.ShutDown()
	q.Add("a")
	server := httptest.NewServer(metrics.Handler())
	defer server.Close()
	resp, err := server.Client().Get(server.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var missing []string
	for _, want := range []string{`workqueue_adds_total{controller="served",name="served"} 1`, "go_goroutines", "process_"} {
		if !strings.Contains(string(body), want) {
			missing = append(missing, want)
		}
	}
	if diff := cmp.Diff([]string(nil), missing); diff != "" {
		t.Errorf("missing from the handler's answer (-want +got):\n%s", diff)
	}
}
