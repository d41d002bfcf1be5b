// Package genericprometheus exports the metrics of generic informers, and
// of controllers' workqueues, to Prometheus: Metrics is a
// generic.MetricsProvider and a client-go workqueue.MetricsProvider that is
// also a prometheus.Collector, and its Handler serves it over HTTP.
//
//	metrics := genericprometheus.New()
//	http.Handle("/metrics", metrics.Handler()) // or registry.MustRegister(metrics)
//	factory, err := typed.NewFactory(config, scheme.Scheme, generic.WithMetricsProvider(metrics))
//	c, err := controller.New("quota", primary, reconcile, controller.WithQueueMetrics(metrics))
//
// It is built on github.com/prometheus/client_golang rather than
// k8s.io/component-base/metrics: a controller's metrics end up in a
// client_golang registry anyway (controller-runtime's metrics.Registry is
// a prometheus.Registerer, and component-base wraps client_golang), and
// component-base would bring its stability framework, its global legacy
// registry and several more modules to every user, for nothing this
// package needs. It is a module of its own,
// github.com/generic-informers/generic/prometheus, released with the
// library, so that client_golang is not in the module graph (nor in the
// version selection) of a program that does not import it: the core
// imports no metrics library and requires none.
//
// Every informer metric has the labels group, version and resource (the
// informer's GVR) and shard (the informer's shard, "index/count", or ""
// when not sharded). Informers with the same labels (one resource in two
// namespaces, or with two selectors) are added up: their counters and
// histograms are shared, objects and objects_encoded_bytes are their sums, state counts how many are
// in each state, last_sync_timestamp_seconds is the latest. An informer's
// series go away when the last informer with its labels stops (its Run
// returns, as after Release or Shutdown).
//
// The metrics, with the prefix generic_informer_:
//
//	objects                          gauge      objects in the cache, read at scrape time
//	objects_encoded_bytes            gauge      the objects' encoded size: each one's protobuf (else JSON)
//	                                            encoding's length, added up (generic.InformerGauges.EncodedBytes)
//	events_total{type}               counter    events delivered: add, update, delete, tombstone
//	rejected_objects_total           counter    objects the ingest rejected (*generic.ConversionError)
//	dropped_errors_total             counter    errors not reported to the ErrorHandler: 1,000 reports were
//	                                            waiting for it already (generic.Status.DroppedErrors)
//	requests_total{request}          counter    list (per page) and watch requests sent to the server
//	request_failures_total{request,reason}
//	                                 counter    failed requests, and watches ended by an error event,
//	                                            by metav1.StatusReason ("Expired", "NotFound", ...),
//	                                            "Unknown" (none, or not one apimachinery defines) or "Other"
//	relists_total                    counter    complete lists after the first
//	last_sync_timestamp_seconds      gauge      Unix time of the last complete list (0: none yet)
//	state{state}                     gauge      how many informers with the labels are in each generic.State
//	initial_sync_received_objects    gauge      objects received by the initial sync so far
//	delivery_latency_seconds         histogram  watch event arrival to each handler call
//
// See generic.MetricsProvider for exactly what each one counts.
//
// Metrics is also a generic.MembershipMetricsProvider: a factory with
// generic.WithMembership reports where its replica stands, with the
// labels group and identity, read at scrape time, until the replica has
// left (see NewMembershipMetrics): generic_membership_members,
// shard_index, shard_count, owns, stepped_down and
// last_reshard_timestamp_seconds.
//
// Metrics is also client-go's workqueue.MetricsProvider: give it to a
// controller (controller.WithQueueMetrics), or to any client-go queue made
// with a Name (workqueue.TypedRateLimitingQueueConfig{Name: name,
// MetricsProvider: metrics}), and the queue reports the workqueue metrics of
// controller-runtime, with its names, labels and buckets, so that its
// dashboards and alerts work unchanged. Every one has the labels name and
// controller, both the queue's name (a controller's queue is named after
// the controller):
//
//	workqueue_depth                              gauge      items added and not yet taken by Get
//	workqueue_adds_total                         counter    items added (not those already waiting)
//	workqueue_retries_total                      counter    items added after a delay (AddAfter, AddRateLimited)
//	workqueue_queue_duration_seconds             histogram  seconds from an item's add to its Get
//	workqueue_work_duration_seconds              histogram  seconds from an item's Get to its Done
//	workqueue_unfinished_work_seconds            gauge      seconds spent so far on the items not yet Done, added up
//	workqueue_longest_running_processor_seconds  gauge      seconds spent so far on the oldest item not yet Done
//
// The two last are set by the queue every 500 ms. Queues of the same name
// share their series (counts and depths add up; the two last gauges hold
// whichever queue set them last), and a queue's series stay after it shuts
// down: client-go does not tell its MetricsProvider.
//
// Registering Metrics once (or serving it with Handler, which adds the Go
// runtime's and the process's metrics) exports both the informers' and the
// queues' metrics. Its workqueue metrics are always described, so it cannot
// be registered where controller-runtime's are: controller-runtime's
// metrics.Registry, in a program that links its controllers
// (sigs.k8s.io/controller-runtime/pkg/controller, which registers its
// workqueue metrics there when the program starts), rejects it, because
// the names are taken. Register its InformerCollector there instead
// (everything but the workqueue metrics), or register Metrics with a
// registry of its own, or serve it with Handler. The controller-runtime
// cache of github.com/generic-informers/generic/ctrlcache registers an
// InformerCollector there with ctrlcache.Options.Metrics.
package genericprometheus

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/generic-informers/generic"
)

// Namespace is the prefix of every metric name, followed by "_informer_".
const Namespace = "generic"

// DefaultLatencyBuckets are the buckets of delivery_latency_seconds: 100µs
// to about 26s, by factors of 4.
var DefaultLatencyBuckets = prometheus.ExponentialBuckets(0.0001, 4, 10)

// labelNames are the labels of every metric.
var labelNames = []string{"group", "version", "resource", "shard"}

// states are the values of the state label.
var states = []generic.State{generic.NotStarted, generic.Syncing, generic.Synced, generic.NotServed, generic.Forbidden, generic.Stopped}

// Metrics is a generic.MetricsProvider, a workqueue.MetricsProvider and a
// prometheus.Collector: give it to the informers with
// generic.WithMetricsProvider and to controllers with
// controller.WithQueueMetrics, and register it once with a
// prometheus.Registerer (or serve it with Handler); it collects the metrics
// of both. The zero Metrics is not usable; call New. It is safe for
// concurrent use, and may serve any number of factories and queues.
type Metrics struct {
	events   *prometheus.CounterVec
	rejected *prometheus.CounterVec
	dropped  *prometheus.CounterVec
	requests *prometheus.CounterVec
	failures *prometheus.CounterVec
	relists  *prometheus.CounterVec
	latency  *prometheus.HistogramVec

	objects  *prometheus.Desc
	encoded  *prometheus.Desc
	lastSync *prometheus.Desc
	state    *prometheus.Desc
	received *prometheus.Desc
	stale    *prometheus.Desc

	queue       *queueMetrics
	memberships *memberships
	// delays is generic_controller_consistency_delays_total
	// (consistency.go).
	delays *prometheus.CounterVec

	mu   sync.Mutex
	sets map[labelValues]map[*informerMetrics]struct{}
}

var (
	_ generic.MetricsProvider           = (*Metrics)(nil)
	_ generic.MembershipMetricsProvider = (*Metrics)(nil)
	_ prometheus.Collector              = (*Metrics)(nil)
)

// New returns Metrics with no informer yet.
func New() *Metrics {
	name := func(n string) string { return prometheus.BuildFQName(Namespace, "informer", n) }
	counter := func(n, help string, extra ...string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name(n), Help: help}, append(append([]string(nil), labelNames...), extra...))
	}
	return &Metrics{
		events:   counter("events_total", "Events the informer delivered to its cache and handlers, once each, by type: add, update, delete, tombstone (a delete learnt from a relist).", "type"),
		rejected: counter("rejected_objects_total", "Objects the informer's ingest rejected and skipped: they did not decode or convert, or had no name."),
		dropped:  counter("dropped_errors_total", "Errors the informer met and did not report to its ErrorHandler, because 1,000 reports were waiting for it already."),
		requests: counter("requests_total", "List (one per page) and watch requests the informer sent to the server.", "request"),
		failures: counter("request_failures_total", "Failed list and watch requests, and watches ended by an error event, by the server's reason (metav1.StatusReason), Unknown (none, or not one apimachinery defines) or Other (not an API error).", "request", "reason"),
		relists:  counter("relists_total", "Complete lists (or WatchList streams) after the informer's first."),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    name("delivery_latency_seconds"),
			Help:    "Time from a watch event's arrival at the informer's ingest to each call of an event handler with it.",
			Buckets: DefaultLatencyBuckets,
		}, labelNames),
		objects:     prometheus.NewDesc(name("objects"), "Objects in the informer's cache.", labelNames, nil),
		encoded:     prometheus.NewDesc(name("objects_encoded_bytes"), "Encoded size of the objects in the informer's cache, in bytes: the length of each one's protobuf encoding if its Go type has one, else of its JSON encoding, added up; not the heap they take (see the library's docs/metrics.md).", labelNames, nil),
		lastSync:    prometheus.NewDesc(name("last_sync_timestamp_seconds"), "Unix time of the informer's last complete list; 0 if none.", labelNames, nil),
		state:       prometheus.NewDesc(name("state"), "How many informers with these labels are in each state (NotStarted, Syncing, Synced, NotServed, Forbidden, Stopped).", append(append([]string(nil), labelNames...), "state"), nil),
		received:    prometheus.NewDesc(name("initial_sync_received_objects"), "Objects the informer's initial sync has received from the server so far.", labelNames, nil),
		stale:       prometheus.NewDesc(name("stale_objects"), "Objects the informer's cache holds at their last good state although the server has a newer one that did not decode, convert or transform (generic.Status.Stale).", labelNames, nil),
		queue:       newQueueMetrics(),
		memberships: newMemberships(),
		delays:      newConsistencyDelays(),
		sets:        map[labelValues]map[*informerMetrics]struct{}{},
	}
}

type labelValues struct{ group, version, resource, shard string }

func (l labelValues) values(extra ...string) []string {
	return append([]string{l.group, l.version, l.resource, l.shard}, extra...)
}

func (l labelValues) labels() prometheus.Labels {
	return prometheus.Labels{"group": l.group, "version": l.version, "resource": l.resource, "shard": l.shard}
}

// NewInformerMetrics implements generic.MetricsProvider.
func (m *Metrics) NewInformerMetrics(id generic.InformerID, gauges generic.InformerGauges) generic.InformerMetrics {
	l := labelValues{group: id.GVR.Group, version: id.GVR.Version, resource: id.GVR.Resource, shard: id.Shard}
	i := &informerMetrics{metrics: m, labels: l, gauges: gauges}
	m.mu.Lock()
	defer m.mu.Unlock()
	set := m.sets[l]
	if set == nil {
		set = map[*informerMetrics]struct{}{}
		m.sets[l] = set
	}
	set[i] = struct{}{}
	return i
}

// forget drops i, and the series of its labels if it was the last
// informer with them.
func (m *Metrics) forget(i *informerMetrics) {
	m.mu.Lock()
	defer m.mu.Unlock()
	set := m.sets[i.labels]
	if _, ok := set[i]; !ok {
		return
	}
	delete(set, i)
	if len(set) > 0 {
		return
	}
	delete(m.sets, i.labels)
	labels := i.labels.labels()
	for _, vec := range []*prometheus.CounterVec{m.events, m.rejected, m.dropped, m.requests, m.failures, m.relists} {
		vec.DeletePartialMatch(labels)
	}
	m.latency.DeletePartialMatch(labels)
}

// Describe implements prometheus.Collector.
func (m *Metrics) Describe(ch chan<- *prometheus.Desc) { m.describe(ch, true) }

// Collect implements prometheus.Collector. It reads each informer's cache
// size and Status.
func (m *Metrics) Collect(ch chan<- prometheus.Metric) { m.collect(ch, true) }

// describe describes m's metrics, the workqueue metrics if queues.
func (m *Metrics) describe(ch chan<- *prometheus.Desc, queues bool) {
	for _, vec := range []*prometheus.CounterVec{m.events, m.rejected, m.dropped, m.requests, m.failures, m.relists, m.delays} {
		vec.Describe(ch)
	}
	m.latency.Describe(ch)
	if queues {
		for _, c := range m.queue.collectors() {
			c.Describe(ch)
		}
	}
	ch <- m.objects
	ch <- m.encoded
	ch <- m.lastSync
	ch <- m.state
	ch <- m.received
	ch <- m.stale
	m.memberships.describe(ch)
}

// collect collects m's metrics, the workqueue metrics if queues.
func (m *Metrics) collect(ch chan<- prometheus.Metric, queues bool) {
	for _, vec := range []*prometheus.CounterVec{m.events, m.rejected, m.dropped, m.requests, m.failures, m.relists, m.delays} {
		vec.Collect(ch)
	}
	m.latency.Collect(ch)
	if queues {
		for _, c := range m.queue.collectors() {
			c.Collect(ch)
		}
	}
	m.memberships.collect(ch)
	m.collectGauges(ch)
}

// collectGauges collects the informers' gauges, read now.
func (m *Metrics) collectGauges(ch chan<- prometheus.Metric) {
	m.mu.Lock()
	sets := make(map[labelValues][]*informerMetrics, len(m.sets))
	for l, set := range m.sets {
		for i := range set {
			sets[l] = append(sets[l], i)
		}
	}
	m.mu.Unlock()
	for l, informers := range sets {
		var objects, encoded, received, lastSync, stale float64
		inState := make(map[generic.State]float64, len(states))
		for _, i := range informers {
			if i.gauges.ObjectsCached != nil {
				objects += float64(i.gauges.ObjectsCached())
			}
			if i.gauges.EncodedBytes != nil {
				encoded += float64(i.gauges.EncodedBytes())
			}
			if i.gauges.Status == nil {
				continue
			}
			status := i.gauges.Status()
			inState[status.State]++
			received += float64(status.Progress.Received)
			stale += float64(status.Stale)
			if !status.LastSync.IsZero() {
				lastSync = max(lastSync, float64(status.LastSync.UnixNano())/1e9)
			}
		}
		ch <- prometheus.MustNewConstMetric(m.objects, prometheus.GaugeValue, objects, l.values()...)
		ch <- prometheus.MustNewConstMetric(m.encoded, prometheus.GaugeValue, encoded, l.values()...)
		ch <- prometheus.MustNewConstMetric(m.received, prometheus.GaugeValue, received, l.values()...)
		ch <- prometheus.MustNewConstMetric(m.stale, prometheus.GaugeValue, stale, l.values()...)
		ch <- prometheus.MustNewConstMetric(m.lastSync, prometheus.GaugeValue, lastSync, l.values()...)
		for _, s := range states {
			ch <- prometheus.MustNewConstMetric(m.state, prometheus.GaugeValue, inState[s], l.values(s.String())...)
		}
	}
}

// informerMetrics are one informer's: children of the Metrics' vectors,
// shared with the other informers of the same labels.
type informerMetrics struct {
	generic.NoopInformerMetrics
	metrics *Metrics
	labels  labelValues
	gauges  generic.InformerGauges
	once    sync.Once
}

func (i *informerMetrics) EventsMetric(eventType generic.EventType) generic.CounterMetric {
	return i.metrics.events.WithLabelValues(i.labels.values(string(eventType))...)
}

func (i *informerMetrics) RejectedMetric() generic.CounterMetric {
	return i.metrics.rejected.WithLabelValues(i.labels.values()...)
}

func (i *informerMetrics) DroppedErrorsMetric() generic.CounterMetric {
	return i.metrics.dropped.WithLabelValues(i.labels.values()...)
}

func (i *informerMetrics) RequestsMetric(request generic.Request) generic.CounterMetric {
	return i.metrics.requests.WithLabelValues(i.labels.values(string(request))...)
}

func (i *informerMetrics) RequestFailuresMetric(request generic.Request, reason string) generic.CounterMetric {
	return i.metrics.failures.WithLabelValues(i.labels.values(string(request), reason)...)
}

func (i *informerMetrics) RelistsMetric() generic.CounterMetric {
	return i.metrics.relists.WithLabelValues(i.labels.values()...)
}

func (i *informerMetrics) DeliveryLatencyMetric() generic.HistogramMetric {
	return i.metrics.latency.WithLabelValues(i.labels.values()...)
}

// Delete drops the informer; its labels' series go when no other informer
// has them.
func (i *informerMetrics) Delete() { i.once.Do(func() { i.metrics.forget(i) }) }
