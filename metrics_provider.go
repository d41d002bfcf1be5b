package generic

import (
	"errors"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/generic-informers/generic/internal/listwatch"
	"github.com/generic-informers/generic/internal/telemetry"
)

// timedEvery is the least time between two watch events an informer
// times for the delivery latency (see MetricsProvider): at most 50,000 a
// second. A var for tests (export_test.go).
var timedEvery = 20 * time.Microsecond

// newTelemetry makes what an informer of gvr measures of itself; measured
// says whether it has a MetricsProvider.
func newTelemetry(gvr schema.GroupVersionResource, measured bool) *telemetry.Telemetry {
	return telemetry.New(telemetry.Config{
		Name:         gvr.String(),
		Measured:     measured,
		TimedEvery:   timedEvery,
		LogVerbosity: ProgressLogVerbosity,
		LogInterval:  ProgressLogInterval,
	})
}

// metricsProviderOf returns the informer's MetricsProvider, nil if none
// (a nil pointer in the interface included).
func metricsProviderOf(o options) MetricsProvider {
	if o.metricsProvider == nil || isNilPointer(o.metricsProvider) {
		return nil
	}
	return o.metricsProvider
}

// encodedSize returns how the informer's list/watch chain measures each
// object it records, for InformerGauges.EncodedBytes: nil, measuring
// nothing, without a MetricsProvider.
func (i *informer[T]) encodedSize() func(listwatch.Stored) int {
	if i.provider == nil {
		return nil
	}
	return encodedSize
}

// resolveMetrics asks the informer's MetricsProvider, as its Run starts,
// for the metrics of this Run; nil without a provider or metrics.
func (i *informer[T]) resolveMetrics() *telemetry.Metrics {
	if i.provider == nil {
		return nil
	}
	id := InformerID{GVR: i.gvr, Namespace: i.namespace, Shard: i.shard.describe()}
	m := i.provider.NewInformerMetrics(id, InformerGauges{
		ObjectsCached: i.chain.Held,
		EncodedBytes:  i.chain.HeldEncodedBytes,
		Status:        i.Status,
	})
	if m == nil || isNilPointer(m) {
		return nil
	}
	failures := &failureCounters{informer: m, counters: map[failureKey]CounterMetric{}}
	resolved := &telemetry.Metrics{
		Rejected:      orNoop(m.RejectedMetric()),
		DroppedErrors: orNoop(m.DroppedErrorsMetric()),
		Relists:       orNoop(m.RelistsMetric()),
		Latency:       histogramOrNoop(m.DeliveryLatencyMetric()),
		Failed:        failures.failed,
		Delete:        m.Delete,
	}
	for kind, e := range [...]EventType{EventAdd, EventUpdate, EventDelete, EventTombstone} {
		resolved.Events[kind] = orNoop(m.EventsMetric(e))
	}
	resolved.Requests[telemetry.RequestList] = orNoop(m.RequestsMetric(RequestList))
	resolved.Requests[telemetry.RequestWatch] = orNoop(m.RequestsMetric(RequestWatch))
	return resolved
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

// failureCounters asks the provider for the counter of a request's
// failures for a reason the first time it fails so, and keeps it.
type failureCounters struct {
	informer InformerMetrics

	mu       sync.Mutex
	counters map[failureKey]CounterMetric
}

type failureKey struct {
	request Request
	reason  string
}

// failed counts a failure of request kind request (telemetry.RequestList
// or RequestWatch).
func (f *failureCounters) failed(request int, err error) {
	kind := RequestList
	if request == telemetry.RequestWatch {
		kind = RequestWatch
	}
	key := failureKey{kind, failureReason(err)}
	f.mu.Lock()
	c, ok := f.counters[key]
	if !ok {
		c = orNoop(f.informer.RequestFailuresMetric(key.request, key.reason))
		f.counters[key] = c
	}
	f.mu.Unlock()
	c.Inc()
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
