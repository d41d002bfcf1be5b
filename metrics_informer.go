package generic

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// telemetry is what an informer measures of itself: the initial sync's
// progress, always, and its metrics when it has a MetricsProvider. The
// ingest, the request counter, the handlers and Run feed it; its methods
// are safe for concurrent use and cost an atomic load when there are no
// metrics.
type telemetry struct {
	gvr       schema.GroupVersionResource
	namespace string
	provider  MetricsProvider
	progress  syncProgress
	// clock stamps watch events for the delivery latency; nil without a
	// provider.
	clock *deliveryClock
	// metrics are the provider's metrics from Run to its end; nil before,
	// after and without a provider.
	metrics atomic.Pointer[resolvedMetrics]
	// completeLists counts the complete lists (and WatchList streams):
	// the first is the initial sync, the others relists.
	completeLists atomic.Int64
}

func newTelemetry(gvr schema.GroupVersionResource, o options) *telemetry {
	t := &telemetry{gvr: gvr, namespace: o.namespace, provider: o.metricsProvider}
	t.progress.gvr = gvr.String()
	if t.provider != nil && !isNilPointer(t.provider) {
		t.clock = newDeliveryClock(t)
	} else {
		t.provider = nil
	}
	return t
}

// resolvedMetrics are one Run's metrics, fetched from the provider once.
type resolvedMetrics struct {
	informer InformerMetrics
	events   [4]CounterMetric
	requests [2]CounterMetric
	rejected CounterMetric
	relists  CounterMetric
	latency  HistogramMetric

	mu       sync.Mutex
	failures map[failureKey]CounterMetric
}

type failureKey struct {
	request Request
	reason  string
}

// start begins the initial sync's clock and makes the metrics of this Run.
func (t *telemetry) start(id InformerID, gauges InformerGauges) {
	t.progress.start(time.Now())
	if t.provider == nil {
		return
	}
	m := t.provider.NewInformerMetrics(id, gauges)
	if m == nil || isNilPointer(m) {
		return
	}
	r := &resolvedMetrics{
		informer: m,
		rejected: orNoop(m.RejectedMetric()),
		relists:  orNoop(m.RelistsMetric()),
		latency:  histogramOrNoop(m.DeliveryLatencyMetric()),
		failures: map[failureKey]CounterMetric{},
	}
	for i, e := range EventTypes {
		r.events[i] = orNoop(m.EventsMetric(e))
	}
	r.requests[0] = orNoop(m.RequestsMetric(RequestList))
	r.requests[1] = orNoop(m.RequestsMetric(RequestWatch))
	t.metrics.Store(r)
}

// stop deletes the metrics of the Run that has returned.
func (t *telemetry) stop() {
	if r := t.metrics.Swap(nil); r != nil {
		r.informer.Delete()
	}
}

func orNoop(c CounterMetric) CounterMetric {
	if c == nil || isNilPointer(c) {
		return noopMetric{}
	}
	return c
}

func histogramOrNoop(h HistogramMetric) HistogramMetric {
	if h == nil || isNilPointer(h) {
		return noopMetric{}
	}
	return h
}

func eventIndex(e EventType) int {
	switch e {
	case EventAdd:
		return 0
	case EventUpdate:
		return 1
	case EventDelete:
		return 2
	default:
		return 3
	}
}

// events counts n events of type e.
func (t *telemetry) events(e EventType, n int) {
	r := t.metrics.Load()
	if r == nil {
		return
	}
	c := r.events[eventIndex(e)]
	for range n {
		c.Inc()
	}
}

// rejected counts err if it is an object the ingest rejected.
func (t *telemetry) rejected(err error) {
	r := t.metrics.Load()
	if r == nil {
		return
	}
	var conversion *ConversionError
	if errors.As(err, &conversion) {
		r.rejected.Inc()
	}
}

// request counts a request sent to the server.
func (t *telemetry) request(request Request) {
	if r := t.metrics.Load(); r != nil {
		r.requests[requestIndex(request)].Inc()
	}
}

func requestIndex(request Request) int {
	if request == RequestWatch {
		return 1
	}
	return 0
}

// failed counts a failed request, unless ctx ended (the informer stopping
// cancels its requests).
func (t *telemetry) failed(ctx context.Context, request Request, err error) {
	r := t.metrics.Load()
	if r == nil || ctx.Err() != nil {
		return
	}
	r.failure(request, failureReason(err)).Inc()
}

// failure returns the counter of a request's failures for reason.
func (r *resolvedMetrics) failure(request Request, reason string) CounterMetric {
	key := failureKey{request, reason}
	r.mu.Lock()
	defer r.mu.Unlock()
	c, ok := r.failures[key]
	if !ok {
		c = orNoop(r.informer.RequestFailuresMetric(request, reason))
		r.failures[key] = c
	}
	return c
}

// failureReason is the reason of an API status error, FailureOther for
// any other error. A reason apimachinery does not define (a server may
// send any string), and no reason (metav1.StatusReasonUnknown, which is
// ""), are FailureUnknown, so that a metric labelled by it has a
// bounded number of series.
func failureReason(err error) string {
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return FailureOther
	}
	if reason := status.Status().Reason; knownStatusReasons[reason] {
		return string(reason)
	}
	return FailureUnknown
}

// knownStatusReasons are the StatusReasons of apimachinery v0.37.2's
// pkg/apis/meta/v1/types.go but StatusReasonUnknown.
var knownStatusReasons = map[metav1.StatusReason]bool{
	metav1.StatusReasonUnauthorized: true,
	metav1.StatusReasonForbidden:    true, metav1.StatusReasonNotFound: true,
	metav1.StatusReasonAlreadyExists: true, metav1.StatusReasonConflict: true,
	metav1.StatusReasonGone: true, metav1.StatusReasonInvalid: true,
	metav1.StatusReasonServerTimeout: true, metav1.StatusReasonStoreReadError: true,
	metav1.StatusReasonTimeout: true, metav1.StatusReasonTooManyRequests: true,
	metav1.StatusReasonBadRequest: true, metav1.StatusReasonMethodNotAllowed: true,
	metav1.StatusReasonNotAcceptable: true, metav1.StatusReasonRequestEntityTooLarge: true,
	metav1.StatusReasonUnsupportedMediaType: true, metav1.StatusReasonInternalError: true,
	metav1.StatusReasonExpired: true, metav1.StatusReasonServiceUnavailable: true,
}

// listed records a complete list (or WatchList stream): the first ends the
// initial sync's count of objects received, the others are relists.
func (t *telemetry) listed() {
	if t.completeLists.Add(1) == 1 {
		t.progress.listed()
		return
	}
	if r := t.metrics.Load(); r != nil {
		r.relists.Inc()
	}
}

// observeLatency records a delivery latency.
func (t *telemetry) observeLatency(d time.Duration) {
	if r := t.metrics.Load(); r != nil {
		r.latency.Observe(d.Seconds())
	}
}

// metricsID is the informer's InformerID as it starts.
func (i *informer[T]) metricsID() InformerID {
	return InformerID{GVR: i.gvr, Namespace: i.telemetry.namespace, Shard: i.shard.describe()}
}

// metricsGauges are the informer's gauges, read at scrape time.
func (i *informer[T]) metricsGauges() InformerGauges {
	indexer := i.shared.GetIndexer()
	return InformerGauges{
		ObjectsCached: func() int { return len(indexer.ListKeys()) },
		Status:        i.Status,
	}
}

// startTelemetry starts the initial sync's clock and the metrics of Run.
func (i *informer[T]) startTelemetry() {
	var id InformerID
	var gauges InformerGauges
	if i.telemetry.provider != nil {
		id, gauges = i.metricsID(), i.metricsGauges()
	}
	i.telemetry.start(id, gauges)
}

// reportIngest is the ingest's report: a rejected object is counted, then
// handed to the ErrorHandler.
func (i *informer[T]) reportIngest(ctx context.Context, err error) {
	i.telemetry.rejected(err)
	i.reportFrom(ctx, err)
}
