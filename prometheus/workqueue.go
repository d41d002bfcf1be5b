package genericprometheus

import (
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/util/workqueue"
)

var _ workqueue.MetricsProvider = (*Metrics)(nil)

// queueMetrics are the metrics of workqueues (a controller's, through
// controller.WithQueueMetrics), with controller-runtime's names and labels
// (sigs.k8s.io/controller-runtime/pkg/metrics/workqueue.go), so that
// dashboards made for controller-runtime read them: every series has the
// labels name and controller, both the queue's name.
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

// queueBuckets are controller-runtime's: 1 ns to about 17 minutes, by
// factors of 10 (seconds).
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
		retries:        counter("retries_total", "Total number of retries handled by workqueue."),
	}
}

func (q *queueMetrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{q.depth, q.adds, q.latency, q.workDuration, q.unfinished, q.longestRunning, q.retries}
}

// NewDepthMetric implements workqueue.MetricsProvider: workqueue_depth.
func (m *Metrics) NewDepthMetric(name string) workqueue.GaugeMetric {
	return m.queue.depth.WithLabelValues(name, name)
}

// NewAddsMetric implements workqueue.MetricsProvider: workqueue_adds_total.
func (m *Metrics) NewAddsMetric(name string) workqueue.CounterMetric {
	return m.queue.adds.WithLabelValues(name, name)
}

// NewLatencyMetric implements workqueue.MetricsProvider:
// workqueue_queue_duration_seconds.
func (m *Metrics) NewLatencyMetric(name string) workqueue.HistogramMetric {
	return m.queue.latency.WithLabelValues(name, name)
}

// NewWorkDurationMetric implements workqueue.MetricsProvider:
// workqueue_work_duration_seconds.
func (m *Metrics) NewWorkDurationMetric(name string) workqueue.HistogramMetric {
	return m.queue.workDuration.WithLabelValues(name, name)
}

// NewUnfinishedWorkSecondsMetric implements workqueue.MetricsProvider:
// workqueue_unfinished_work_seconds.
func (m *Metrics) NewUnfinishedWorkSecondsMetric(name string) workqueue.SettableGaugeMetric {
	return m.queue.unfinished.WithLabelValues(name, name)
}

// NewLongestRunningProcessorSecondsMetric implements
// workqueue.MetricsProvider: workqueue_longest_running_processor_seconds.
func (m *Metrics) NewLongestRunningProcessorSecondsMetric(name string) workqueue.SettableGaugeMetric {
	return m.queue.longestRunning.WithLabelValues(name, name)
}

// NewRetriesMetric implements workqueue.MetricsProvider:
// workqueue_retries_total.
func (m *Metrics) NewRetriesMetric(name string) workqueue.CounterMetric {
	return m.queue.retries.WithLabelValues(name, name)
}
