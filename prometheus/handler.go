package genericprometheus

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Handler returns an http.Handler that serves, in the Prometheus
// exposition format, everything m measures (informers and workqueues) and
// the Go runtime's and the process's metrics (client_golang's collectors),
// from a registry of its own:
//
//	http.Handle("/metrics", metrics.Handler())
//
// To serve m from a registry of yours instead (controller-runtime's
// metrics.Registry, say), register m there and do not use Handler. Each
// call makes a new registry; call it once.
func (m *Metrics) Handler() http.Handler {
	registry := prometheus.NewRegistry()
	registry.MustRegister(m, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return promhttp.HandlerFor(registry, promhttp.HandlerOpts{})
}
