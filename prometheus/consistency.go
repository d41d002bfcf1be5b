package genericprometheus

import (
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/workqueue"

	"github.com/generic-informers/generic/controller"
)

var _ controller.ConsistencyMetricsProvider = (*Metrics)(nil)

// newConsistencyDelays is the counter generic_controller_consistency_delays_total,
// labelled controller, group, version and resource.
func newConsistencyDelays() *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: prometheus.BuildFQName(Namespace, "controller", "consistency_delays_total"),
		Help: "Times a controller requeued a key instead of reconciling it, because the informer of this resource had not caught up with the key's own last write.",
	}, []string{"controller", "group", "version", "resource"})
}

// NewConsistencyDelaysMetric implements controller.ConsistencyMetricsProvider:
// the series of generic_controller_consistency_delays_total of the
// controller name and resource. Controllers of one name share it. It may
// be called concurrently, and what it returns is safe for concurrent use.
func (m *Metrics) NewConsistencyDelaysMetric(name string, resource schema.GroupVersionResource) workqueue.CounterMetric {
	return m.delays.WithLabelValues(name, resource.Group, resource.Version, resource.Resource)
}
