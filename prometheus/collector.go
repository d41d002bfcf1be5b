package genericprometheus

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/generic-informers/generic"
)

// InformerCollector returns a prometheus.Collector of everything m
// measures but the workqueue metrics: the informers' (generic_informer_*),
// the memberships' (generic_membership_*) and the controllers' consistency
// delays (generic_controller_consistency_delays_total). Register it where
// workqueue metrics of the same names are registered already, as in
// controller-runtime's metrics.Registry in a program that links its
// controllers, which rejects m itself (see the package doc):
//
//	metrics.Registry.MustRegister(m.InformerCollector()) // sigs.k8s.io/controller-runtime/pkg/metrics
//
// Register m or its InformerCollector in a registry, not both. Every call
// returns a collector of the same metrics, which a registry tells apart
// from no other: registering a second one where one is registered is a
// prometheus.AlreadyRegisteredError whose ExistingCollector is the first.
//
// The collector is also m's generic.MetricsProvider and
// generic.MembershipMetricsProvider (the workqueue metrics it leaves out
// are not its to provide): whoever finds it registered, as the
// ExistingCollector of an AlreadyRegisteredError, can have informers
// report to it. It is safe for concurrent use, as m is.
func (m *Metrics) InformerCollector() prometheus.Collector { return informerCollector{m} }

// informerCollector is Metrics without its workqueue metrics.
type informerCollector struct{ m *Metrics }

var (
	_ prometheus.Collector              = informerCollector{}
	_ generic.MembershipMetricsProvider = informerCollector{}
)

func (c informerCollector) Describe(ch chan<- *prometheus.Desc) { c.m.describe(ch, false) }

func (c informerCollector) Collect(ch chan<- prometheus.Metric) { c.m.collect(ch, false) }

// NewInformerMetrics implements generic.MetricsProvider: m's.
func (c informerCollector) NewInformerMetrics(id generic.InformerID, gauges generic.InformerGauges) generic.InformerMetrics {
	return c.m.NewInformerMetrics(id, gauges)
}

// NewMembershipMetrics implements generic.MembershipMetricsProvider: m's.
func (c informerCollector) NewMembershipMetrics(group, identity string, status func() generic.MembershipStatus) (remove func()) {
	return c.m.NewMembershipMetrics(group, identity, status)
}
