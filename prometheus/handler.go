package genericprometheus

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Handler returns an http.Handler that serves, in the Prometheus
// exposition format (text, or what the scraper asks for), everything m
// measures (informers and workqueues) and the Go runtime's and the
// process's metrics (client_golang's collectors: go_*, process_*), from a
// registry of its own, gathered at each request:
//
//	http.Handle("/metrics", metrics.Handler())
//
// The handler is safe for concurrent use, like m. To serve m from a
// registry of yours instead, register m there and do not use Handler (see
// the package doc for controller-runtime's metrics.Registry). Each call
// makes a new registry; call it once.
func (m *Metrics) Handler() http.Handler {
	registry := prometheus.NewRegistry()
	registry.MustRegister(m, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return promhttp.HandlerFor(registry, promhttp.HandlerOpts{})
}
