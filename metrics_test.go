package generic_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/generic-informers/generic"
)

// recordingProvider is a MetricsProvider that keeps every value, for
// tests: counters by name, the latency observations, the gauges.
type recordingProvider struct {
	mu        sync.Mutex
	informers []*recordingMetrics
}

func (p *recordingProvider) NewInformerMetrics(id generic.InformerID, gauges generic.InformerGauges) generic.InformerMetrics {
	p.mu.Lock()
	defer p.mu.Unlock()
	m := &recordingMetrics{id: id, gauges: gauges, counters: map[string]*atomic.Int64{}}
	p.informers = append(p.informers, m)
	return m
}

func (p *recordingProvider) only(t *testing.T) *recordingMetrics {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.informers) != 1 {
		t.Fatalf("%d informers made metrics, want 1", len(p.informers))
	}
	return p.informers[0]
}

type recordingMetrics struct {
	generic.NoopInformerMetrics
	id      generic.InformerID
	gauges  generic.InformerGauges
	deleted atomic.Int32

	mu        sync.Mutex
	counters  map[string]*atomic.Int64
	latencies []float64
}

type recordingCounter struct{ n *atomic.Int64 }

func (c recordingCounter) Inc() { c.n.Add(1) }

type recordingHistogram struct{ m *recordingMetrics }

func (h recordingHistogram) Observe(v float64) {
	h.m.mu.Lock()
	defer h.m.mu.Unlock()
	h.m.latencies = append(h.m.latencies, v)
}

func (m *recordingMetrics) counter(name string) generic.CounterMetric {
	m.mu.Lock()
	defer m.mu.Unlock()
	n, ok := m.counters[name]
	if !ok {
		n = &atomic.Int64{}
		m.counters[name] = n
	}
	return recordingCounter{n}
}

func (m *recordingMetrics) EventsMetric(e generic.EventType) generic.CounterMetric {
	return m.counter("events/" + string(e))
}
func (m *recordingMetrics) RejectedMetric() generic.CounterMetric { return m.counter("rejected") }
func (m *recordingMetrics) DroppedErrorsMetric() generic.CounterMetric {
	return m.counter("dropped-errors")
}
func (m *recordingMetrics) RequestsMetric(r generic.Request) generic.CounterMetric {
	return m.counter("requests/" + string(r))
}
func (m *recordingMetrics) RequestFailuresMetric(r generic.Request, reason string) generic.CounterMetric {
	return m.counter("failures/" + string(r) + "/" + reason)
}
func (m *recordingMetrics) RelistsMetric() generic.CounterMetric { return m.counter("relists") }
func (m *recordingMetrics) DeliveryLatencyMetric() generic.HistogramMetric {
	return recordingHistogram{m}
}
func (m *recordingMetrics) Delete() { m.deleted.Add(1) }

// metricsSnapshot is every metric of an informer, comparable with cmp.Diff.
type metricsSnapshot struct {
	Counters        map[string]int64
	Latencies       int
	ObjectsCached   int
	State           generic.State
	Received        int64
	LastSyncPresent bool
}

func (m *recordingMetrics) snapshot() metricsSnapshot {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := metricsSnapshot{Counters: map[string]int64{}, Latencies: len(m.latencies)}
	for name, n := range m.counters {
		if v := n.Load(); v != 0 {
			s.Counters[name] = v
		}
	}
	for _, l := range m.latencies {
		if l < 0 {
			s.Latencies = -1 // a negative latency is a bug
		}
	}
	s.ObjectsCached = m.gauges.ObjectsCached()
	status := m.gauges.Status()
	s.State, s.Received, s.LastSyncPresent = status.State, status.Progress.Received, !status.LastSync.IsZero()
	return s
}

func namedConfigMap(name, rv string) *unstructured.Unstructured {
	cm := newConfigMap("default", name, "blue")
	cm.SetResourceVersion(rv)
	return cm
}

// eventLog is a handler that sends a line per event.
func eventLog(lines chan<- string) cache.ResourceEventHandlerFuncs {
	return cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { lines <- "add " + keyOrTombstone(obj) },
		UpdateFunc: func(_, obj any) {
			lines <- "update " + keyOrTombstone(obj)
		},
		DeleteFunc: func(obj any) { lines <- "delete " + keyOrTombstone(obj) },
	}
}

func keyOrTombstone(obj any) string {
	if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		return "tombstone " + tombstone.Key
	}
	key, _ := cache.MetaNamespaceKeyFunc(obj)
	return key
}

func waitForLines(t *testing.T, lines <-chan string, want ...string) {
	t.Helper()
	ctx, cancel := testContext(t)
	defer cancel()
	pending := map[string]int{}
	for _, w := range want {
		pending[w]++
	}
	for len(pending) > 0 {
		select {
		case line := <-lines:
			if pending[line]--; pending[line] <= 0 {
				delete(pending, line)
			}
		case <-ctx.Done():
			t.Fatalf("still waiting for %v", pending)
		}
	}
}

// TestMetricsAfterScriptedEvents checks every metric after a scripted
// initial list, watch events, a rejected object in each, a watch that
// expires, and a relist that finds one object gone (a tombstone).
func TestMetricsAfterScriptedEvents(t *testing.T) {
	defer generic.TimeEveryEvent()()
	nameless := namedConfigMap("", "3")
	lw := newScriptedListerWatcher(
		unstructuredList("10", namedConfigMap("a", "1"), namedConfigMap("b", "2"), nameless),
		unstructuredList("20", namedConfigMap("a", "12"), namedConfigMap("d", "15")),
	)
	provider := &recordingProvider{}
	informer := newInformer[*unstructured.Unstructured](lw, configMapsGVR, nil,
		generic.WithMetricsProvider(provider), generic.WithErrorHandler(func(context.Context, error) {}))
	lines := make(chan string, 100)
	if _, err := informer.Informer().AddEventHandler(eventLog(lines)); err != nil {
		t.Fatal(err)
	}
	stop := runSynced(t, informer)
	defer stop()
	waitForLines(t, lines, "add default/a", "add default/b")

	w := lw.nextWatch(t)
	w.Add(namedConfigMap("c", "11"))
	w.Modify(namedConfigMap("a", "12"))
	w.Delete(namedConfigMap("b", "13"))
	w.Add(namedConfigMap("", "14"))
	waitForLines(t, lines, "add default/c", "update default/a", "delete default/b")
	expire(w)
	lw.nextWatch(t)
	waitForLines(t, lines, "update default/a", "add default/d", "delete tombstone default/c")

	m := provider.only(t)
	want := metricsSnapshot{
		Counters: map[string]int64{
			"events/add":             4, // a, b (list); c (watch); d (relist)
			"events/update":          2, // a (watch); a (relist)
			"events/delete":          1, // b
			"events/tombstone":       1, // c, gone at the relist
			"rejected":               2, // the nameless ones
			"requests/list":          2,
			"requests/watch":         2,
			"failures/watch/Expired": 1,
			"relists":                1,
		},
		Latencies:       3, // the watch's add, update and delete, to the one handler
		ObjectsCached:   2,
		State:           generic.Synced,
		Received:        3, // the first list's items, the rejected one included
		LastSyncPresent: true,
	}
	if diff := cmp.Diff(want, m.snapshot()); diff != "" {
		t.Errorf("metrics (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(generic.InformerID{GVR: configMapsGVR}, m.id); diff != "" {
		t.Errorf("InformerID (-want +got):\n%s", diff)
	}
	stop()
	if n := m.deleted.Load(); n != 1 {
		t.Errorf("Delete called %d times after Run returned, want 1", n)
	}
}

// failingListerWatcher fails every list with err.
type failingListerWatcher struct{ err error }

func (lw failingListerWatcher) List(metav1.ListOptions) (runtime.Object, error) { return nil, lw.err }
func (lw failingListerWatcher) Watch(metav1.ListOptions) (watch.Interface, error) {
	return nil, lw.err
}

// TestMetricsRequestFailures checks the failure reasons: the server's
// StatusReason, or Other.
func TestMetricsRequestFailures(t *testing.T) {
	tests := []struct {
		name   string
		err    error
		reason string
		state  generic.State
	}{
		{name: "forbidden", err: forbidden(), reason: "Forbidden", state: generic.Forbidden},
		{name: "not an API error", err: errors.New("connection refused"), reason: generic.FailureOther, state: generic.Syncing},
		{name: "a reason apimachinery does not define", err: &apierrors.StatusError{ErrStatus: metav1.Status{
			Status: metav1.StatusFailure, Code: 499, Reason: "MadeUpByAnAggregatedServer",
		}}, reason: generic.FailureUnknown, state: generic.Syncing},
		{name: "no reason", err: &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: 500}}, reason: generic.FailureUnknown, state: generic.Syncing},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			provider := &recordingProvider{}
			informer := newInformer[*unstructured.Unstructured](failingListerWatcher{tc.err}, configMapsGVR, nil,
				generic.WithMetricsProvider(provider))
			stop := runInformer(t, informer.Run)
			defer stop()
			ctx, cancel := testContext(t)
			defer cancel()
			var m *recordingMetrics
			for ctx.Err() == nil {
				provider.mu.Lock()
				if len(provider.informers) == 1 {
					m = provider.informers[0]
				}
				provider.mu.Unlock()
				// The failure is counted before the informer hears of it
				// and sets its state: wait for both.
				if m != nil && m.snapshot().Counters["failures/list/"+tc.reason] > 0 && m.snapshot().State == tc.state {
					break
				}
				waitABit(ctx)
			}
			got := m.snapshot()
			if got.Counters["failures/list/"+tc.reason] < 1 || got.Counters["requests/list"] < got.Counters["failures/list/"+tc.reason] {
				t.Errorf("counters %v: want list failures with reason %s, no more than the lists", got.Counters, tc.reason)
			}
			if got.State != tc.state {
				t.Errorf("state %v, want %v", got.State, tc.state)
			}
		})
	}
}

// TestNoMetricsProvider: without a provider the informer makes no metrics
// but reports its sync progress.
func TestSyncProgressWithoutMetrics(t *testing.T) {
	lw := newScriptedListerWatcher(unstructuredList("10", namedConfigMap("a", "1"), namedConfigMap("b", "2")))
	informer := newInformer[*unstructured.Unstructured](lw, configMapsGVR, nil)
	if got := informer.Status().Progress; got != (generic.SyncProgress{}) {
		t.Errorf("progress before Run: %+v, want zero", got)
	}
	stop := runSynced(t, informer)
	defer stop()
	got := informer.Status().Progress
	if got.Received != 2 || !got.Done || got.Started.IsZero() || got.Elapsed <= 0 || got.Rate <= 0 {
		t.Errorf("progress after the sync: %+v, want 2 received, done, with a start, elapsed time and rate", got)
	}
	// Elapsed stops once the informer hears that its cache is filled, a
	// moment after HasSynced.
	waitUntil(t, "elapsed stops growing after the sync", func() bool {
		before := informer.Status().Progress.Elapsed
		time.Sleep(10 * time.Millisecond)
		return informer.Status().Progress.Elapsed == before
	})
}

// nilMetricsProvider returns nil metrics, which the informer must survive.
type nilMetricsProvider struct{}

func (nilMetricsProvider) NewInformerMetrics(generic.InformerID, generic.InformerGauges) generic.InformerMetrics {
	return nil
}

// nilCounters returns nil for every metric.
type nilCounters struct{ generic.NoopInformerMetrics }

func (nilCounters) EventsMetric(generic.EventType) generic.CounterMetric { return nil }
func (nilCounters) DeliveryLatencyMetric() generic.HistogramMetric       { return nil }

type nilCountersProvider struct{}

func (nilCountersProvider) NewInformerMetrics(generic.InformerID, generic.InformerGauges) generic.InformerMetrics {
	return nilCounters{}
}

func TestBadMetricsProviders(t *testing.T) {
	var nilPointer *recordingProvider
	for _, provider := range []generic.MetricsProvider{nilMetricsProvider{}, nilCountersProvider{}, nilPointer} {
		t.Run(fmt.Sprintf("%T", provider), func(t *testing.T) {
			lw := newScriptedListerWatcher(unstructuredList("10", namedConfigMap("a", "1")))
			informer := newInformer[*unstructured.Unstructured](lw, configMapsGVR, nil, generic.WithMetricsProvider(provider))
			lines := make(chan string, 10)
			if _, err := informer.Informer().AddEventHandler(eventLog(lines)); err != nil {
				t.Fatal(err)
			}
			stop := runSynced(t, informer)
			defer stop()
			lw.nextWatch(t).Add(namedConfigMap("b", "2"))
			waitForLines(t, lines, "add default/a", "add default/b")
		})
	}
}

func forbidden() error {
	return apierrors.NewForbidden(configMapsGVR.GroupResource(), "", errors.New("not allowed"))
}

// waitABit waits 10 ms, or until ctx ends.
func waitABit(ctx context.Context) {
	timer := time.NewTimer(10 * time.Millisecond)
	defer timer.Stop()
	select {
	case <-timer.C:
	case <-ctx.Done():
	}
}
