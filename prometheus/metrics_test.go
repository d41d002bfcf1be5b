package genericprometheus_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"go.uber.org/goleak"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"

	"github.com/generic-informers/generic"
	genericprometheus "github.com/generic-informers/generic/prometheus"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var configMaps = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

func configMap(namespace, name string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"namespace": namespace, "name": name},
	}}
}

// scrape gathers registry and returns every sample as "name{labels}" ->
// value; a histogram gives its _count only, its other values being times.
func scrape(t *testing.T, registry *prometheus.Registry) map[string]float64 {
	t.Helper()
	families, err := registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	samples := map[string]float64{}
	for _, family := range families {
		for _, metric := range family.GetMetric() {
			var labels []string
			for _, l := range metric.GetLabel() {
				if l.GetValue() != "" {
					labels = append(labels, l.GetName()+"="+l.GetValue())
				}
			}
			name := family.GetName() + "{" + strings.Join(labels, ",") + "}"
			switch family.GetType() {
			case dto.MetricType_COUNTER:
				samples[name] = metric.GetCounter().GetValue()
			case dto.MetricType_GAUGE:
				samples[name] = metric.GetGauge().GetValue()
			case dto.MetricType_HISTOGRAM:
				samples[strings.Replace(name, "{", "_count{", 1)] = float64(metric.GetHistogram().GetSampleCount())
			}
		}
	}
	return samples
}

// series names a sample of the informers' labels (the empty group and
// shard are left out) and extra ones, as scrape does: labels sorted.
func series(name string, extra ...string) string {
	labels := append([]string{"resource=configmaps", "version=v1"}, extra...)
	slices.Sort(labels)
	return name + "{" + strings.Join(labels, ",") + "}"
}

// TestScrape runs two informers of ConfigMaps (two namespaces, the same
// labels) through a Factory, makes changes, and checks the scrape: their
// values added up, then the series gone once both are released.
func TestScrape(t *testing.T) {
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{configMaps: "ConfigMapList"},
		configMap("a", "one"), configMap("a", "two"), configMap("b", "three"))
	watching := openWatchesLate(client)
	metrics := genericprometheus.New()
	registry := prometheus.NewPedanticRegistry()
	registry.MustRegister(metrics)
	factory, err := generic.NewFactory[*unstructured.Unstructured](generic.DynamicSource(client), nil, generic.WithMetricsProvider(metrics))
	if err != nil {
		t.Fatal(err)
	}
	defer factory.Shutdown()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	inA, err := factory.Acquire(configMaps, generic.WithNamespace("a"))
	if err != nil {
		t.Fatal(err)
	}
	inB, err := factory.Acquire(configMaps, generic.WithNamespace("b"))
	if err != nil {
		t.Fatal(err)
	}
	seen := make(chan string, 100)
	for _, informer := range []generic.Handle[*unstructured.Unstructured]{inA, inB} {
		_, err := informer.AddEventHandler(cache.TypedResourceEventHandlerFuncs[*unstructured.Unstructured]{
			AddFunc:    func(u *unstructured.Unstructured) { seen <- "add " + u.GetName() },
			UpdateFunc: func(_, u *unstructured.Unstructured) { seen <- "update " + u.GetName() },
			DeleteFunc: func(d cache.DeletedObject[*unstructured.Unstructured]) { seen <- "delete " + d.GetName() },
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	factory.Start(ctx)
	if err := factory.WaitForCacheSync(ctx).AsError(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, seen, "add one", "add two", "add three")
	// A cache syncs on its list, before its watch is open; and the fake
	// client, unlike a server, does not send a watch opened late the
	// deletes it missed. So change nothing before both watches are open.
	waitFor(t, ctx, watching, "watch a", "watch b")

	resource := client.Resource(configMaps)
	if _, err := resource.Namespace("a").Create(ctx, configMap("a", "four"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	updated := configMap("b", "three")
	updated.SetLabels(map[string]string{"x": "y"})
	if _, err := resource.Namespace("b").Update(ctx, updated, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := resource.Namespace("a").Delete(ctx, "one", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, seen, "add four", "update three", "delete one")

	got := scrape(t, registry)
	lastSync := series("generic_informer_last_sync_timestamp_seconds")
	if ts := got[lastSync]; ts < float64(time.Now().Add(-time.Minute).Unix()) || ts > float64(time.Now().Unix()+1) {
		t.Errorf("%s = %v, want about now", lastSync, ts)
	}
	delete(got, lastSync)
	// The first watch event is always timed; later ones may be sampled
	// when they come fast (see generic.MetricsProvider).
	latencies := series("generic_informer_delivery_latency_seconds_count")
	if n := got[latencies]; n < 1 || n > 3 {
		t.Errorf("%s = %v, want 1 to 3", latencies, n)
	}
	delete(got, latencies)
	want := map[string]float64{
		series("generic_informer_objects"):                         3,
		series("generic_informer_objects_encoded_bytes"):           jsonBytes(t, inA, inB),
		series("generic_informer_events_total", "type=add"):        4,
		series("generic_informer_events_total", "type=update"):     1,
		series("generic_informer_events_total", "type=delete"):     1,
		series("generic_informer_events_total", "type=tombstone"):  0,
		series("generic_informer_rejected_objects_total"):          0,
		series("generic_informer_dropped_errors_total"):            0,
		series("generic_informer_requests_total", "request=list"):  2,
		series("generic_informer_requests_total", "request=watch"): 2,
		series("generic_informer_relists_total"):                   0,
		series("generic_informer_initial_sync_received_objects"):   3,
		series("generic_informer_stale_objects"):                   0,
		series("generic_informer_state", "state=NotStarted"):       0,
		series("generic_informer_state", "state=Syncing"):          0,
		series("generic_informer_state", "state=Synced"):           2,
		series("generic_informer_state", "state=NotServed"):        0,
		series("generic_informer_state", "state=Forbidden"):        0,
		series("generic_informer_state", "state=Stopped"):          0,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("scrape (-want +got):\n%s", diff)
	}

	// Release does not wait: an informer's series go when its Run ends,
	// soon after.
	inA.Release()
	var got1 map[string]float64
	if err := wait.PollUntilContextCancel(ctx, 10*time.Millisecond, true, func(context.Context) (bool, error) {
		got1 = scrape(t, registry)
		return got1[series("generic_informer_objects")] == 1, nil
	}); err != nil {
		t.Errorf("objects after one release: %v, want 1 (namespace b's): %v", got1[series("generic_informer_objects")], got1)
	}
	inB.Release()
	var left map[string]float64
	if err := wait.PollUntilContextCancel(ctx, 10*time.Millisecond, true, func(context.Context) (bool, error) {
		left = scrape(t, registry)
		return len(left) == 0, nil
	}); err != nil {
		t.Errorf("series left after the last release: %v", slices.Sorted(mapKeys(left)))
	}
}

// jsonBytes is the length of the JSON encoding of each object the
// informers cache, added up: their objects_encoded_bytes.
func jsonBytes(t *testing.T, informers ...generic.Handle[*unstructured.Unstructured]) float64 {
	t.Helper()
	var n int
	for _, informer := range informers {
		objs, err := informer.Lister().List(labels.Everything())
		if err != nil {
			t.Fatal(err)
		}
		for _, obj := range objs {
			data, err := json.Marshal(obj.Object)
			if err != nil {
				t.Fatal(err)
			}
			n += len(data)
		}
	}
	return float64(n)
}

// openWatchesLate makes each watch of ConfigMaps the client returns
// start watching 50 ms late, as on a loaded machine a reflector may call
// Watch well after its list: the fake then sends the watch the objects
// added or updated since the list, but not the deletes. It says
// "watch <namespace>" on the returned channel once a watch sees every
// change.
func openWatchesLate(client *dynamicfake.FakeDynamicClient) <-chan string {
	opened := make(chan string, 100)
	client.PrependWatchReactor(configMaps.Resource, func(action clienttesting.Action) (bool, watch.Interface, error) {
		var options metav1.ListOptions
		if watchAction, ok := action.(clienttesting.WatchActionImpl); ok {
			options = watchAction.ListOptions
		}
		events := make(chan watch.Event)
		late := watch.NewProxyWatcher(events)
		go func() {
			defer close(events)
			select {
			case <-time.After(50 * time.Millisecond):
			case <-late.StopChan():
				return
			}
			inner, err := client.Tracker().Watch(configMaps, action.GetNamespace(), options)
			if err != nil {
				return
			}
			defer inner.Stop()
			opened <- "watch " + action.GetNamespace()
			for {
				select {
				case event, ok := <-inner.ResultChan():
					if !ok {
						return
					}
					select {
					case events <- event:
					case <-late.StopChan():
						return
					}
				case <-late.StopChan():
					return
				}
			}
		}()
		return true, late, nil
	})
	return opened
}

func mapKeys(m map[string]float64) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func waitFor(t *testing.T, ctx context.Context, seen <-chan string, want ...string) {
	t.Helper()
	pending := map[string]bool{}
	for _, w := range want {
		pending[w] = true
	}
	for len(pending) > 0 {
		select {
		case s := <-seen:
			delete(pending, s)
		case <-ctx.Done():
			t.Fatalf("still waiting for %v", pending)
		}
	}
}

// ExampleNew serves an informer's metrics from a Prometheus registry.
func ExampleNew() {
	metrics := genericprometheus.New()
	registry := prometheus.NewRegistry()
	registry.MustRegister(metrics)
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{configMaps: "ConfigMapList"}, configMap("default", "settings"))
	factory, err := generic.NewFactory[*unstructured.Unstructured](generic.DynamicSource(client), nil, generic.WithMetricsProvider(metrics))
	if err != nil {
		panic(err)
	}
	defer factory.Shutdown()
	informer, err := factory.Acquire(configMaps)
	if err != nil {
		panic(err)
	}
	defer informer.Release()
	factory.Start(context.Background())
	if err := factory.WaitForCacheSync(context.Background()).AsError(); err != nil {
		panic(err)
	}

	families, _ := registry.Gather()
	for _, family := range families {
		if family.GetName() == "generic_informer_objects" {
			fmt.Println(family.GetName(), family.GetMetric()[0].GetGauge().GetValue())
		}
	}
	// Output: generic_informer_objects 1
}

// TestDroppedErrors: the error reports an informer dropped
// (generic.InformerMetrics.DroppedErrorsMetric) are
// generic_informer_dropped_errors_total, added up over the informers with
// the same labels, and gone when the last of them is deleted.
func TestDroppedErrors(t *testing.T) {
	tests := []struct {
		name    string
		dropped []int // per informer of the same labels
		want    float64
	}{
		{name: "none dropped", dropped: []int{0}, want: 0},
		{name: "one informer", dropped: []int{3}, want: 3},
		{name: "two informers of the same labels add up", dropped: []int{2, 5}, want: 7},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			metrics := genericprometheus.New()
			registry := prometheus.NewPedanticRegistry()
			registry.MustRegister(metrics)
			var informers []generic.InformerMetrics
			for _, n := range tc.dropped {
				m := metrics.NewInformerMetrics(generic.InformerID{GVR: configMaps}, generic.InformerGauges{})
				counter := m.DroppedErrorsMetric()
				for range n {
					counter.Inc()
				}
				informers = append(informers, m)
			}
			name := series("generic_informer_dropped_errors_total")
			if diff := cmp.Diff(tc.want, scrape(t, registry)[name]); diff != "" {
				t.Errorf("%s (-want +got):\n%s", name, diff)
			}
			for _, m := range informers {
				m.Delete()
			}
			if got, ok := scrape(t, registry)[name]; ok {
				t.Errorf("%s = %v after every informer was deleted, want no series", name, got)
			}
		})
	}
}

// TestObjectsEncodedBytes: generic_informer_objects_encoded_bytes is the
// sum of the EncodedBytes gauges of the informers of its labels, read at
// scrape time, and goes with the last of them.
func TestObjectsEncodedBytes(t *testing.T) {
	tests := []struct {
		name string
		// encoded are the informers' gauges; nil is an informer without one.
		encoded []func() int64
		want    float64
	}{
		{name: "an empty cache", encoded: []func() int64{func() int64 { return 0 }}, want: 0},
		{name: "one informer", encoded: []func() int64{func() int64 { return 9623 }}, want: 9623},
		{name: "two informers of one resource add up", encoded: []func() int64{func() int64 { return 9623 }, func() int64 { return 2455 }}, want: 12078},
		{name: "an informer without the gauge counts 0", encoded: []func() int64{nil, func() int64 { return 7 }}, want: 7},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			metrics := genericprometheus.New()
			registry := prometheus.NewPedanticRegistry()
			registry.MustRegister(metrics)
			var informers []generic.InformerMetrics
			for _, encoded := range tc.encoded {
				informers = append(informers, metrics.NewInformerMetrics(generic.InformerID{GVR: configMaps}, generic.InformerGauges{EncodedBytes: encoded}))
			}
			name := series("generic_informer_objects_encoded_bytes")
			got, ok := scrape(t, registry)[name]
			if diff := cmp.Diff(fmt.Sprint(tc.want, true), fmt.Sprint(got, ok)); diff != "" {
				t.Errorf("%s, and whether it is scraped (-want +got):\n%s", name, diff)
			}
			for _, m := range informers {
				m.Delete()
			}
			if got, ok := scrape(t, registry)[name]; ok {
				t.Errorf("%s = %v after every informer was deleted, want no series", name, got)
			}
		})
	}
}

// TestStaleObjects: generic_informer_stale_objects is the sum of the
// Status.Stale of the informers of its labels (issue 45: objects kept at
// their last good state are counted).
func TestStaleObjects(t *testing.T) {
	tests := []struct {
		name  string
		stale []int
		want  float64
	}{
		{name: "none", stale: []int{0}, want: 0},
		{name: "one informer", stale: []int{2}, want: 2},
		{name: "two informers of one resource", stale: []int{2, 3}, want: 5},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			metrics := genericprometheus.New()
			registry := prometheus.NewPedanticRegistry()
			registry.MustRegister(metrics)
			for _, n := range tc.stale {
				informer := metrics.NewInformerMetrics(generic.InformerID{GVR: configMaps}, generic.InformerGauges{
					Status: func() generic.Status { return generic.Status{State: generic.Synced, Stale: n} },
				})
				defer informer.Delete()
			}
			if got := scrape(t, registry)[series("generic_informer_stale_objects")]; got != tc.want {
				t.Errorf("generic_informer_stale_objects = %v, want %v", got, tc.want)
			}
		})
	}
}
