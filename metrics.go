package generic

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
)

// CounterMetric counts: Inc adds one. It must be safe for concurrent use.
type CounterMetric interface {
	Inc()
}

// HistogramMetric records observations: Observe is called with one value
// (for delivery latency, in seconds). It must be safe for concurrent use.
type HistogramMetric interface {
	Observe(float64)
}

// EventType is the type of an event an informer delivers, as a metric
// label value.
type EventType string

const (
	// EventAdd is an object the informer did not hold.
	EventAdd EventType = "add"
	// EventUpdate is a new state of an object it held, also an unchanged
	// one delivered again by a relist. (client-go delivers an unchanged
	// object of a relist only to the handlers that are due for a resync,
	// which without a resync period is every handler; with one
	// (WithResyncPeriod), most handlers do not get these updates, which are
	// counted all the same.)
	EventUpdate EventType = "update"
	// EventDelete is a delete the server sent in a watch (or a known
	// object whose update no longer decodes).
	EventDelete EventType = "delete"
	// EventTombstone is a delete the informer only learnt of from a relist:
	// handlers get it with a cache.DeletedFinalStateUnknown.
	EventTombstone EventType = "tombstone"
)

// EventTypes lists every EventType, for providers that make their metrics
// up front.
var EventTypes = []EventType{EventAdd, EventUpdate, EventDelete, EventTombstone}

// Request is the kind of a request an informer sends to the server, as a
// metric label value.
type Request string

const (
	// RequestList is a list request, one per page.
	RequestList Request = "list"
	// RequestWatch is a watch request (a WatchList stream included).
	RequestWatch Request = "watch"
)

// Failure reasons that are not a metav1.StatusReason. An API status
// error's reason is its metav1.StatusReason ("NotFound", "Forbidden",
// "Expired", "Timeout", ...) if apimachinery defines it.
const (
	// FailureOther is the reason of an error that is not an API status
	// from the server (a connection refused, a timeout on the client's
	// side).
	FailureOther = "Other"
	// FailureUnknown is the reason of an API status error with no reason
	// (metav1.StatusReasonUnknown, which is the empty string) or with one
	// apimachinery does not define: a server may send any string, and a
	// label must have a bounded number of values.
	FailureUnknown = "Unknown"
)

// InformerID names an informer to its MetricsProvider: the labels of its
// metrics. Two informers may have the same InformerID (the same resource,
// in the same namespace, with other label or field selectors): a provider
// should add up their metrics, or tell them apart itself.
type InformerID struct {
	// GVR is the informer's resource.
	GVR schema.GroupVersionResource
	// Namespace is the namespace the informer is limited to; "" for all.
	Namespace string
	// Shard is the informer's shard, "index/count" ("1/3"), as
	// Status.Shard says it when the informer starts; "" when it holds
	// every object.
	Shard string
}

// InformerGauges are read by the provider when it exports the informer's
// gauges (at scrape time), never on the informer's own path. Both are safe
// for concurrent use, until and after the informer stops.
type InformerGauges struct {
	// ObjectsCached returns how many objects the informer's cache holds:
	// a count the informer keeps as it hands objects to its cache, read
	// with one lock and no allocation, whatever the number of objects.
	// It counts an object from when the reflector takes it, before the
	// cache has stored it: while the informer's queue holds objects (a
	// large list being stored, a burst of events) it is ahead of the
	// cache by that many. While the resource is not served it is 0.
	ObjectsCached func() int
	// EncodedBytes returns the encoded size, in bytes, of the objects
	// ObjectsCached counts: the sum over them of the length of each one's
	// protobuf encoding if its Go type has one (k8s.io/api's types,
	// metav1.PartialObjectMetadata; under WithCompactStore, the encoding
	// the store compressed), or else of its JSON encoding as encoding/json
	// writes it (*unstructured.Unstructured, custom resources' Go types).
	// An object is measured once, as the ingest hands it to the cache
	// (after WithTransform and WithStripManagedFields), and its size is
	// kept until it goes: a read takes one lock and allocates nothing,
	// whatever the number of objects, and it follows ObjectsCached (ahead
	// of the cache by what the informer's queue holds; 0 while the
	// resource is not served).
	//
	// It is the size of the data the cache holds, not of the heap it
	// takes: each object counts in full, though the cache's objects share
	// equal strings, maps and slices, and neither the Go structures' own
	// overhead, the store's indexes nor a compact store's compression
	// count. docs/metrics.md gives the heap it stands for, measured.
	EncodedBytes func() int64
	// Status returns the informer's Status: State, LastSync, Progress.
	Status func() Status
}

// MetricsProvider makes the metrics of each informer. Set it with
// WithMetricsProvider; it must be safe for concurrent use.
//
// It is in the manner of client-go's metrics providers (the reflector's
// cache.MetricsProvider, workqueue.MetricsProvider): the library defines
// what it measures and calls a MetricsProvider, which decides how to keep
// and export it. The core imports no metrics library; package
// github.com/generic-informers/generic/prometheus is a provider for
// Prometheus. Without WithMetricsProvider, nothing is measured; the
// initial sync's progress (Status.Progress) is kept either way.
//
// What is measured, per informer:
//
//   - objects cached: a count of what the informer hands its cache, read
//     when the provider asks (InformerGauges.ObjectsCached);
//   - the objects' encoded size in bytes: each object's protobuf (else
//     JSON) encoding's length, measured once at ingest and added up, read
//     when the provider asks (InformerGauges.EncodedBytes);
//   - events by EventType: what the ingest hands to the informer's cache
//     and handlers, once per event whatever the number of handlers: every
//     add, update and delete of a watch (an object whose update no longer
//     decodes counts as the delete it becomes), and, at each complete list
//     (or WatchList stream), an add for each object the informer did not
//     hold, an update for each it held and a tombstone for each it held and
//     the list no longer has. Resyncs (WithResyncPeriod) are not events from
//     the server and are not counted; nor are the deletes of the objects
//     still held when the resource stops being served (the informer's
//     guard answers that list for the server, outside the ingest; the
//     watch usually delivered those deletes already);
//   - objects rejected: each *ConversionError the ingest reports (an object
//     that did not decode or convert, or had no name);
//   - error reports dropped: each report meant for the ErrorHandler that was
//     dropped because 1,000 were waiting for it already (see
//     WithErrorHandler), as Status.DroppedErrors counts them;
//   - list and watch requests sent to the server (paged lists: one per
//     page; the probes of a NotServed informer included), and their
//     failures by reason: the request's error, or an error event that ends
//     a watch (410 Gone: "Expired");
//   - relists: complete lists (or WatchList streams) after the first one;
//   - the informer's Status (State, LastSync, the initial sync's
//     Progress), read when the provider asks (InformerGauges.Status);
//   - delivery latency: for every watch event, the time from its arrival at
//     the ingest (read from the watch) to the call of each event handler
//     added through Informer.AddEventHandler or Informer().AddEventHandler,
//     observed once per handler call, in seconds. It includes conversion,
//     the informer's queue and store update, and the handler's own backlog;
//     not the handler's run. Objects of lists and WatchList initial events,
//     and resyncs, are not measured; neither is an event whose object the
//     store transform (WithTransform) replaced by another, nor one a
//     handler takes more than 4096 events after it arrived. At most one
//     event per 20 µs is timed (50,000 a second; below that rate, every
//     one), so that timing costs the ingest little at the hundreds of
//     thousands of events a second it can take.
type MetricsProvider interface {
	// NewInformerMetrics is called once per informer, when its Run
	// starts, with its gauges; the informer calls Delete on the result
	// when its Run returns. A nil result measures nothing.
	NewInformerMetrics(id InformerID, gauges InformerGauges) InformerMetrics
}

// InformerMetrics are the metrics of one informer, from its Run to its
// end. Each method but Delete returns the metric that the informer then
// keeps and updates from its own goroutines; EventsMetric, RejectedMetric,
// DroppedErrorsMetric, RequestsMetric, RelistsMetric and
// DeliveryLatencyMetric are called once each (for each EventType and
// Request) when the informer starts, RequestFailuresMetric at the first
// failure of each request and reason.
// A nil metric measures nothing.
//
// Implementations should embed NoopInformerMetrics, so that metrics added
// to this interface later do not break them.
type InformerMetrics interface {
	// EventsMetric counts the events of eventType the informer delivers.
	EventsMetric(eventType EventType) CounterMetric
	// RejectedMetric counts the objects the ingest rejected
	// (*ConversionError).
	RejectedMetric() CounterMetric
	// DroppedErrorsMetric counts the error reports dropped because too
	// many were waiting for the ErrorHandler (Status.DroppedErrors).
	DroppedErrorsMetric() CounterMetric
	// RequestsMetric counts the requests of a kind sent to the server.
	RequestsMetric(request Request) CounterMetric
	// RequestFailuresMetric counts the failed requests of a kind, by
	// reason (see FailureOther and FailureUnknown). A request cancelled because the informer
	// stopped is not a failure.
	RequestFailuresMetric(request Request, reason string) CounterMetric
	// RelistsMetric counts the complete lists after the first.
	RelistsMetric() CounterMetric
	// DeliveryLatencyMetric observes delivery latencies, in seconds.
	DeliveryLatencyMetric() HistogramMetric
	// Delete is called once, when the informer's Run has returned: the
	// provider may drop the informer's metrics and its gauges.
	Delete()
}

// NoopInformerMetrics measures nothing. Embed it in an InformerMetrics
// implementation to stay compatible with later versions of the interface.
type NoopInformerMetrics struct{}

type noopMetric struct{}

func (noopMetric) Inc()            {}
func (noopMetric) Observe(float64) {}

func (NoopInformerMetrics) EventsMetric(EventType) CounterMetric                { return noopMetric{} }
func (NoopInformerMetrics) RejectedMetric() CounterMetric                       { return noopMetric{} }
func (NoopInformerMetrics) DroppedErrorsMetric() CounterMetric                  { return noopMetric{} }
func (NoopInformerMetrics) RequestsMetric(Request) CounterMetric                { return noopMetric{} }
func (NoopInformerMetrics) RequestFailuresMetric(Request, string) CounterMetric { return noopMetric{} }
func (NoopInformerMetrics) RelistsMetric() CounterMetric                        { return noopMetric{} }
func (NoopInformerMetrics) DeliveryLatencyMetric() HistogramMetric              { return noopMetric{} }
func (NoopInformerMetrics) Delete()                                             {}

// WithMetricsProvider makes the informers report their metrics to
// provider (see MetricsProvider); nil, the default, measures nothing.
// Given to NewFactory it applies to every informer; given to
// Factory.Acquire, to that informer.
func WithMetricsProvider(provider MetricsProvider) InformerOption {
	return informerOption(func(o *options) { o.metricsProvider = provider })
}

// WithInformerName gives the informers client-go's informer identity for
// metrics, as client-go's informers.WithInformerName does: each informer's
// cache.SharedIndexInformerOptions.Identifier is name.WithResource(its
// GVR), so that client-go's own informer metrics (the FIFO's queued items
// and processing latency, the store's resource version) are reported to
// the provider set with cache.SetInformerMetricsProvider. Create name once
// with cache.NewInformerName (unique in the process) and Release it at
// shutdown. As in client-go, only the first informer of each GVR under a
// name is measured (client-go logs the others as duplicates): with several
// selections of one resource, give each factory a name of its own. nil,
// the default, reports none of client-go's informer metrics.
//
// They complement MetricsProvider's: client-go's processing latency is the
// run of the handlers after an event leaves the queue; the delivery
// latency (MetricsProvider) is from the event's arrival at the ingest to
// each handler's call, which client-go does not measure.
func WithInformerName(name *cache.InformerName) InformerOption {
	return informerOption(func(o *options) { o.informerName = name })
}
