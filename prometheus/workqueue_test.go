package genericprometheus_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/util/workqueue"

	"github.com/generic-informers/generic"
	genericprometheus "github.com/generic-informers/generic/prometheus"
)

// queueFamilies are the workqueue metrics Metrics exports,
// controller-runtime's.
var queueFamilies = []string{
	"workqueue_adds_total",
	"workqueue_depth",
	"workqueue_longest_running_processor_seconds",
	"workqueue_queue_duration_seconds",
	"workqueue_retries_total",
	"workqueue_unfinished_work_seconds",
	"workqueue_work_duration_seconds",
}

// newQueue makes a client-go rate-limited queue that reports through
// metrics under name, and whose rate limiter delays every retry by a
// minute, longer than any test: an item added with AddRateLimited stays
// waiting.
func newQueue(t *testing.T, metrics *genericprometheus.Metrics, name string) workqueue.TypedRateLimitingInterface[string] {
	t.Helper()
	q := workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.NewTypedItemExponentialFailureRateLimiter[string](time.Minute, time.Minute),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: name, MetricsProvider: metrics})
	t.Cleanup(q.ShutDown)
	return q
}

// queueCounts are the values of a queue's series that do not depend on
// timing: counters, the depth, and how many times the two histograms
// observed (not what).
type queueCounts struct {
	Adds, Depth, Retries float64
	Gets, Dones          uint64 // queue_duration_seconds' and work_duration_seconds' counts
}

// gatherQueue gathers registry, checks that every workqueue family is there
// with one series, of name, labelled name and controller, and returns
// their counts.
func gatherQueue(t *testing.T, registry *prometheus.Registry, name string) queueCounts {
	t.Helper()
	families, err := registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var got queueCounts
	var names []string
	for _, family := range families {
		if !strings.HasPrefix(family.GetName(), "workqueue_") {
			continue
		}
		names = append(names, family.GetName())
		var series []map[string]string
		for _, metric := range family.GetMetric() {
			labels := map[string]string{}
			for _, l := range metric.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			series = append(series, labels)
			switch family.GetName() {
			case "workqueue_adds_total":
				got.Adds = metric.GetCounter().GetValue()
			case "workqueue_depth":
				got.Depth = metric.GetGauge().GetValue()
			case "workqueue_retries_total":
				got.Retries = metric.GetCounter().GetValue()
			case "workqueue_queue_duration_seconds":
				got.Gets = metric.GetHistogram().GetSampleCount()
			case "workqueue_work_duration_seconds":
				got.Dones = metric.GetHistogram().GetSampleCount()
			}
		}
		if diff := cmp.Diff([]map[string]string{{"name": name, "controller": name}}, series); diff != "" {
			t.Errorf("%s's series (-want +got):\n%s", family.GetName(), diff)
		}
	}
	if diff := cmp.Diff(queueFamilies, names); diff != "" {
		t.Errorf("workqueue families (-want +got):\n%s", diff)
	}
	return got
}

// TestWorkqueueMetrics drives real client-go rate-limited queues through
// Metrics and checks what they report, but for the durations' values,
// which depend on timing.
func TestWorkqueueMetrics(t *testing.T) {
	type queue = workqueue.TypedRateLimitingInterface[string]
	get := func(t *testing.T, q queue, want string) {
		t.Helper()
		if key, shutdown := q.Get(); key != want || shutdown {
			t.Fatalf("Get() = %q, %v; want %q, false", key, shutdown, want)
		}
	}
	tests := []struct {
		name string
		// queues is how many queues of the same name to make: they share
		// their series.
		queues int
		drive  func(t *testing.T, qs []queue)
		want   queueCounts
	}{{
		name:   "made, never used",
		queues: 1,
		drive:  func(*testing.T, []queue) {},
		want:   queueCounts{},
	}, {
		name:   "an add of a waiting key is not counted",
		queues: 1,
		drive:  func(_ *testing.T, qs []queue) { qs[0].Add("a"); qs[0].Add("a"); qs[0].Add("b") },
		want:   queueCounts{Adds: 2, Depth: 2},
	}, {
		name:   "taken and done",
		queues: 1,
		drive: func(t *testing.T, qs []queue) {
			qs[0].Add("a")
			get(t, qs[0], "a")
			qs[0].Done("a")
		},
		want: queueCounts{Adds: 1, Gets: 1, Dones: 1},
	}, {
		name:   "taken, not done",
		queues: 1,
		drive: func(t *testing.T, qs []queue) {
			qs[0].Add("a")
			get(t, qs[0], "a")
		},
		want: queueCounts{Adds: 1, Gets: 1},
	}, {
		name:   "added again while processed, queued again at its Done",
		queues: 1,
		drive: func(t *testing.T, qs []queue) {
			qs[0].Add("a")
			get(t, qs[0], "a")
			qs[0].Add("a")
			qs[0].Done("a")
		},
		want: queueCounts{Adds: 2, Depth: 1, Gets: 1, Dones: 1},
	}, {
		name:   "a rate-limited retry waits out its delay",
		queues: 1,
		drive: func(t *testing.T, qs []queue) {
			qs[0].Add("a")
			get(t, qs[0], "a")
			qs[0].AddRateLimited("a")
			qs[0].Done("a")
		},
		want: queueCounts{Adds: 1, Retries: 1, Gets: 1, Dones: 1},
	}, {
		name:   "AddAfter without a delay is a retry and an add",
		queues: 1,
		drive:  func(_ *testing.T, qs []queue) { qs[0].AddAfter("a", 0) },
		want:   queueCounts{Adds: 1, Depth: 1, Retries: 1},
	}, {
		name:   "two queues of one name add up",
		queues: 2,
		drive: func(t *testing.T, qs []queue) {
			qs[0].Add("a")
			qs[1].Add("a")
			qs[1].Add("b")
			get(t, qs[1], "a")
			qs[1].Done("a")
			qs[0].AddRateLimited("c")
		},
		want: queueCounts{Adds: 3, Depth: 2, Retries: 1, Gets: 1, Dones: 1},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			metrics := genericprometheus.New()
			// Registered before the queues are made, as in a program: the
			// queues' series are children of vectors already registered.
			registry := prometheus.NewPedanticRegistry()
			registry.MustRegister(metrics)
			var qs []queue
			for range tc.queues {
				qs = append(qs, newQueue(t, metrics, "reconciler"))
			}
			tc.drive(t, qs)
			if diff := cmp.Diff(tc.want, gatherQueue(t, registry, "reconciler")); diff != "" {
				t.Errorf("queue metrics (-want +got):\n%s", diff)
			}
		})
	}
}

// TestWorkqueueAndInformerMetrics: one registration of Metrics exports both
// the informers' metrics and the queues', and queues of two names have
// their own series.
func TestWorkqueueAndInformerMetrics(t *testing.T) {
	metrics := genericprometheus.New()
	registry := prometheus.NewPedanticRegistry()
	registry.MustRegister(metrics)
	informer := metrics.NewInformerMetrics(generic.InformerID{GVR: configMaps}, generic.InformerGauges{ObjectsCached: func() int { return 2 }})
	defer informer.Delete()
	informer.EventsMetric(generic.EventAdd).Inc()
	one, two := newQueue(t, metrics, "one"), newQueue(t, metrics, "two")
	one.Add("a")
	two.Add("a")
	two.Add("b")

	got := scrape(t, registry)
	want := map[string]float64{
		series("generic_informer_objects"):                       2,
		series("generic_informer_objects_encoded_bytes"):         0,
		series("generic_informer_events_total", "type=add"):      1,
		series("generic_informer_initial_sync_received_objects"): 0,
		series("generic_informer_stale_objects"):                 0,
		series("generic_informer_last_sync_timestamp_seconds"):   0,
	}
	for _, s := range []string{"NotStarted", "Syncing", "Synced", "NotServed", "Forbidden", "Stopped"} {
		want[series("generic_informer_state", "state="+s)] = 0
	}
	for _, name := range []string{"one", "two"} {
		labels := "{controller=" + name + ",name=" + name + "}"
		for _, family := range queueFamilies {
			if strings.HasSuffix(family, "duration_seconds") {
				want[family+"_count"+labels] = 0
			} else {
				want[family+labels] = 0
			}
		}
	}
	want["workqueue_adds_total{controller=one,name=one}"] = 1
	want["workqueue_depth{controller=one,name=one}"] = 1
	want["workqueue_adds_total{controller=two,name=two}"] = 2
	want["workqueue_depth{controller=two,name=two}"] = 2
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("scrape (-want +got):\n%s", diff)
	}
}

// TestHandler: the handler serves, in the text exposition format, the
// informers' metrics, the queues' and the Go runtime's and the process's.
func TestHandler(t *testing.T) {
	metrics := genericprometheus.New()
	informer := metrics.NewInformerMetrics(generic.InformerID{GVR: configMaps}, generic.InformerGauges{ObjectsCached: func() int { return 1 }})
	defer informer.Delete()
	informer.EventsMetric(generic.EventAdd).Inc()
	q := newQueue(t, metrics, "served")
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
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
		t.Fatalf("GET: %s, Content-Type %q, want 200 OK, text/plain:\n%s", resp.Status, resp.Header.Get("Content-Type"), body)
	}

	// The families the body declares (# TYPE lines), of the prefixes
	// this package's and the collectors' metrics have.
	var got []string
	for line := range strings.Lines(string(body)) {
		if fields := strings.Fields(line); len(fields) == 4 && fields[0] == "#" && fields[1] == "TYPE" {
			got = append(got, fields[2])
		}
	}
	want := append([]string{
		"generic_informer_events_total",
		"generic_informer_objects",
		"go_goroutines",
		"process_cpu_seconds_total",
	}, queueFamilies...)
	var missing []string
	for _, name := range want {
		if !slices.Contains(got, name) {
			missing = append(missing, name)
		}
	}
	if diff := cmp.Diff([]string(nil), missing); diff != "" {
		t.Errorf("families missing from the handler's answer (-want +got):\n%s", diff)
	}
	for _, sample := range []string{
		`workqueue_adds_total{controller="served",name="served"} 1`,
		`workqueue_depth{controller="served",name="served"} 1`,
		`generic_informer_events_total{group="",resource="configmaps",shard="",type="add",version="v1"} 1`,
	} {
		if !strings.Contains(string(body), sample+"\n") {
			t.Errorf("the handler's answer lacks %s:\n%s", sample, body)
		}
	}
}
