package genericprometheus

import (
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/util/workqueue"
)

var _ workqueue.MetricsProvider = (*Metrics)(nil)

// queueMetrics are the metrics of workqueues (a controller's, through
// controller.WithQueueMetrics), with controller-runtime's names and labels
// (sigs.k8s.io/controller-runtime/pkg/metrics/workqueue.go), so that
// dashboards and alerts made for controller-runtime read them: every series
// has the labels name and controller, both the queue's name.
// (controller-runtime's workqueue_depth also has a priority label, "" for
// client-go's queues, which have no priorities; PromQL does not tell an
// empty label from a missing one.)
//
// client-go calls a MetricsProvider once per queue, when the queue is made,
// for a child of each vector; queues of the same name get the same children,
// so their series are shared (see Metrics' workqueue methods). A queue's
// series stay after it shuts down: client-go does not tell the provider.
type queueMetrics struct {
	depth          *prometheus.GaugeVec
	adds           *prometheus.CounterVec
	latency        *prometheus.HistogramVec
	workDuration   *prometheus.HistogramVec
	unfinished     *prometheus.GaugeVec
	longestRunning *prometheus.GaugeVec
	retries        *prometheus.CounterVec
}

var queueLabels = []string{"name", "controller"}

// queueBuckets are controller-runtime's: 10 ns to 1,000 s (about 17
// minutes), by factors of 10, in seconds.
var queueBuckets = prometheus.ExponentialBuckets(10e-9, 10, 12)

func newQueueMetrics() *queueMetrics {
	gauge := func(name, help string) *prometheus.GaugeVec {
		return prometheus.NewGaugeVec(prometheus.GaugeOpts{Subsystem: "workqueue", Name: name, Help: help}, queueLabels)
	}
	counter := func(name, help string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Subsystem: "workqueue", Name: name, Help: help}, queueLabels)
	}
	histogram := func(name, help string) *prometheus.HistogramVec {
		return prometheus.NewHistogramVec(prometheus.HistogramOpts{Subsystem: "workqueue", Name: name, Help: help, Buckets: queueBuckets}, queueLabels)
	}
	return &queueMetrics{
		depth:          gauge("depth", "Current depth of workqueue by workqueue."),
		adds:           counter("adds_total", "Total number of adds handled by workqueue."),
		latency:        histogram("queue_duration_seconds", "How long in seconds an item stays in workqueue before being requested."),
		workDuration:   histogram("work_duration_seconds", "How long in seconds processing an item from workqueue takes."),
		unfinished:     gauge("unfinished_work_seconds", "How many seconds of work has been done that is in progress and hasn't been observed by work_duration. Large values indicate stuck threads. One can deduce the number of stuck threads by observing the rate at which this increases."),
		longestRunning: gauge("longest_running_processor_seconds", "How many seconds has the longest running processor for workqueue been running."),
		retries:        counter("retries_total", "Total number of items added to the workqueue with a delay (AddAfter or AddRateLimited: rate-limited retries and requeues)."),
	}
}

func (q *queueMetrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{q.depth, q.adds, q.latency, q.workDuration, q.unfinished, q.longestRunning, q.retries}
}

// The workqueue.MetricsProvider methods below are called by client-go when
// it makes a queue with a Name and this MetricsProvider (a queue without a
// Name reports nothing), once per queue; they may be called concurrently,
// and what they return is safe for concurrent use. Each returns the series
// of the queue's name, labels name and controller both that name: two
// queues of one name share them (counts and depths add up; the two
// *_seconds gauges hold whichever queue set them last), and no name is ever
// registered twice, so a name used again never panics.

// NewDepthMetric implements workqueue.MetricsProvider: the gauge
// workqueue_depth, the items added and not yet taken by Get (one added
// again while it is processed counts: it is taken again after its Done;
// one waiting out a delay does not).
func (m *Metrics) NewDepthMetric(name string) workqueue.GaugeMetric {
	return m.queue.depth.WithLabelValues(name, name)
}

// NewAddsMetric implements workqueue.MetricsProvider: the counter
// workqueue_adds_total, the items added to the queue (an Add of an item
// already waiting is not counted; one added after a delay is, when it is
// added).
func (m *Metrics) NewAddsMetric(name string) workqueue.CounterMetric {
	return m.queue.adds.WithLabelValues(name, name)
}

// NewLatencyMetric implements workqueue.MetricsProvider: the histogram
// workqueue_queue_duration_seconds, the seconds from an item's add to its
// Get.
func (m *Metrics) NewLatencyMetric(name string) workqueue.HistogramMetric {
	return m.queue.latency.WithLabelValues(name, name)
}

// NewWorkDurationMetric implements workqueue.MetricsProvider: the histogram
// workqueue_work_duration_seconds, the seconds from an item's Get to its
// Done (a reconcile, for a controller).
func (m *Metrics) NewWorkDurationMetric(name string) workqueue.HistogramMetric {
	return m.queue.workDuration.WithLabelValues(name, name)
}

// NewUnfinishedWorkSecondsMetric implements workqueue.MetricsProvider: the
// gauge workqueue_unfinished_work_seconds, the seconds spent so far on the
// items taken and not yet Done, added up; client-go sets it every 500 ms
// while the queue runs. Growing steadily, it tells of stuck workers.
func (m *Metrics) NewUnfinishedWorkSecondsMetric(name string) workqueue.SettableGaugeMetric {
	return m.queue.unfinished.WithLabelValues(name, name)
}

// NewLongestRunningProcessorSecondsMetric implements
// workqueue.MetricsProvider: the gauge
// workqueue_longest_running_processor_seconds, the seconds the oldest of the
// items taken and not yet Done has been processed; client-go sets it every
// 500 ms while the queue runs.
func (m *Metrics) NewLongestRunningProcessorSecondsMetric(name string) workqueue.SettableGaugeMetric {
	return m.queue.longestRunning.WithLabelValues(name, name)
}

// NewRetriesMetric implements workqueue.MetricsProvider: the counter
// workqueue_retries_total, the calls of the queue's AddAfter, which
// AddRateLimited makes: rate-limited retries, and requeues after a delay.
func (m *Metrics) NewRetriesMetric(name string) workqueue.CounterMetric {
	return m.queue.retries.WithLabelValues(name, name)
}
