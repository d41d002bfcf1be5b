package controller_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/controller"
	"github.com/generic-informers/generic/generictest"
)

var configMapsGVR = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

// lagging is a factory of unstructured informers over the Fake whose
// watches lag behind the writes exactly as far as the test says: a gate
// holds every watch event until the test flushes it. Lists are served at
// once.
type lagging struct {
	factory *generic.Factory[*unstructured.Unstructured]
	gate    *gate
}

// newLagging makes a lagging factory over fake, shut down when the test
// ends (after the controllers run by run, which stop first).
func newLagging(t *testing.T, fake *generictest.Fake) *lagging {
	t.Helper()
	g := &gate{changed: make(chan struct{})}
	g.holding.Store(true)
	source := func(gvr schema.GroupVersionResource, namespace string, tweak generic.TweakListOptionsFunc) cache.ListerWatcher {
		resource := fake.Dynamic().Resource(gvr).Namespace(namespace)
		return cache.ToListWatcherWithWatchListSemantics(&cache.ListWatch{
			ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
				if tweak != nil {
					tweak(&opts)
				}
				return resource.List(ctx, opts)
			},
			WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
				if tweak != nil {
					tweak(&opts)
				}
				w, err := resource.Watch(ctx, opts)
				if err != nil {
					return nil, err
				}
				return g.wrap(w), nil
			},
		}, fake.Dynamic())
	}
	factory, err := generic.NewFactory[*unstructured.Unstructured](source, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() {
		cancel()
		factory.Shutdown()
	})
	factory.Start(ctx)
	return &lagging{factory: factory, gate: g}
}

// informer acquires the informer of gvr with opts and returns it synced
// and watching.
func (l *lagging) informer(t *testing.T, gvr schema.GroupVersionResource, opts ...generic.InformerOption) generic.Handle[*unstructured.Unstructured] {
	t.Helper()
	watching := l.gate.watches()
	h, err := l.factory.Acquire(gvr, opts...)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.factory.WaitForCacheSync(context.Background()).AsError(); err != nil {
		t.Fatal(err)
	}
	l.gate.waitWatches(watching + 1)
	return h
}

// gate holds the events of the watches it wraps while holding, until
// flushed.
type gate struct {
	holding atomic.Bool

	mu      sync.Mutex
	open    []*gatedWatch
	opened  int
	changed chan struct{} // closed and replaced when a watch opens
}

func (g *gate) wrap(inner watch.Interface) watch.Interface {
	w := &gatedWatch{gate: g, inner: inner, out: make(chan watch.Event), stop: make(chan struct{}), wake: make(chan struct{}, 1)}
	g.mu.Lock()
	g.open = append(g.open, w)
	g.opened++
	close(g.changed)
	g.changed = make(chan struct{})
	g.mu.Unlock()
	go w.pump()
	go w.forward()
	return w
}

// watches returns how many watches have opened.
func (g *gate) watches() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.opened
}

// waitWatches waits until n watches have opened.
func (g *gate) waitWatches(n int) {
	for {
		g.mu.Lock()
		opened, changed := g.opened, g.changed
		g.mu.Unlock()
		if opened >= n {
			return
		}
		<-changed
	}
}

// flush lets every watch deliver the events it has received so far; it
// goes on holding those that come after.
func (g *gate) flush() {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, w := range g.open {
		w.release()
	}
}

// gatedWatch forwards the events of inner that its gate lets through, in
// order.
type gatedWatch struct {
	gate     *gate
	inner    watch.Interface
	out      chan watch.Event
	stop     chan struct{}
	stopOnce sync.Once
	wake     chan struct{}

	mu        sync.Mutex
	queue     []watch.Event
	allowed   int // how many of queue may be delivered
	innerDone bool
}

func (w *gatedWatch) ResultChan() <-chan watch.Event { return w.out }

func (w *gatedWatch) Stop() {
	w.stopOnce.Do(func() {
		close(w.stop)
		w.inner.Stop()
	})
}

func (w *gatedWatch) signal() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

func (w *gatedWatch) release() {
	w.mu.Lock()
	w.allowed = len(w.queue)
	w.mu.Unlock()
	w.signal()
}

// pump takes inner's events into the queue.
func (w *gatedWatch) pump() {
	for e := range w.inner.ResultChan() {
		w.mu.Lock()
		w.queue = append(w.queue, e)
		if !w.gate.holding.Load() {
			w.allowed = len(w.queue)
		}
		w.mu.Unlock()
		w.signal()
	}
	w.mu.Lock()
	w.innerDone = true
	w.mu.Unlock()
	w.signal()
}

// forward delivers the allowed events.
func (w *gatedWatch) forward() {
	defer close(w.out)
	sent := 0
	for {
		w.mu.Lock()
		if sent < w.allowed {
			e := w.queue[sent]
			sent++
			w.mu.Unlock()
			select {
			case w.out <- e:
			case <-w.stop:
				return
			}
			continue
		}
		done := w.innerDone && sent == len(w.queue)
		w.mu.Unlock()
		if done {
			return
		}
		select {
		case <-w.wake:
		case <-w.stop:
			return
		}
	}
}

// delayLog records what a controller reports and counts, and lets a
// test act on each consistency delay.
type delayLog struct {
	mu      sync.Mutex
	delays  []*controller.ConsistencyDelayError
	others  []error
	counted int
	// onDelay, if set, is called with each delay and the number of
	// delays since the last reset.
	onDelay    func(since int)
	sinceReset int
}

// handler is the controller's ErrorHandler.
func (l *delayLog) handler(_ context.Context, err error) {
	var delay *controller.ConsistencyDelayError
	l.mu.Lock()
	if !errors.As(err, &delay) {
		l.others = append(l.others, err)
		l.mu.Unlock()
		return
	}
	l.delays = append(l.delays, delay)
	l.sinceReset++
	since, onDelay := l.sinceReset, l.onDelay
	l.mu.Unlock()
	if onDelay != nil {
		onDelay(since)
	}
}

// reset restarts the count of delays since the last reset.
func (l *delayLog) reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sinceReset = 0
}

// NewConsistencyDelaysMetric makes delayLog a
// controller.ConsistencyMetricsProvider.
func (l *delayLog) NewConsistencyDelaysMetric(string, schema.GroupVersionResource) workqueue.CounterMetric {
	return delayCounter{l}
}

func (l *delayLog) NewDepthMetric(string) workqueue.GaugeMetric  { return noMetric{} }
func (l *delayLog) NewAddsMetric(string) workqueue.CounterMetric { return noMetric{} }
func (l *delayLog) NewLatencyMetric(string) workqueue.HistogramMetric {
	return noMetric{}
}
func (l *delayLog) NewWorkDurationMetric(string) workqueue.HistogramMetric {
	return noMetric{}
}
func (l *delayLog) NewUnfinishedWorkSecondsMetric(string) workqueue.SettableGaugeMetric {
	return noMetric{}
}
func (l *delayLog) NewLongestRunningProcessorSecondsMetric(string) workqueue.SettableGaugeMetric {
	return noMetric{}
}
func (l *delayLog) NewRetriesMetric(string) workqueue.CounterMetric { return noMetric{} }

var _ controller.ConsistencyMetricsProvider = (*delayLog)(nil)

type delayCounter struct{ l *delayLog }

func (c delayCounter) Inc() {
	c.l.mu.Lock()
	defer c.l.mu.Unlock()
	c.l.counted++
}

type noMetric struct{}

func (noMetric) Inc()            {}
func (noMetric) Dec()            {}
func (noMetric) Set(float64)     {}
func (noMetric) Observe(float64) {}

// outcome is what a delayLog saw: delays reported and counted, other
// errors reported.
func (l *delayLog) outcome() (reported, counted int, others []error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.delays), l.counted, append([]error(nil), l.others...)
}

// newReporting is controller.New with quick retries and consistency
// waits (fastRetries, shortWait), its errors and delays reported to log;
// an error is a broken test.
func newReporting(t *testing.T, name string, primary controller.Primary, reconcile controller.Reconciler, log *delayLog, opts ...controller.Option) *controller.Controller {
	t.Helper()
	opts = append([]controller.Option{fastRetries(), shortWait(), controller.WithReconcileErrorHandler(log.handler), controller.WithQueueMetrics(log)}, opts...)
	c, err := controller.New(name, primary, reconcile, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
