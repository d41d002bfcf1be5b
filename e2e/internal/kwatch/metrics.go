package kwatch

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	genericprometheus "github.com/generic-informers/generic/prometheus"
)

// metricsServer serves the informers' metrics at /metrics.
type metricsServer struct {
	metrics *genericprometheus.Metrics
	server  *http.Server
	url     string
	done    chan error
}

// serveMetrics listens on addr and serves metrics from a registry of
// their own until stop.
func serveMetrics(addr string) (*metricsServer, error) {
	listener, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--metrics-addr %q: %w", addr, err)
	}
	metrics := genericprometheus.New()
	registry := prometheus.NewRegistry()
	registry.MustRegister(metrics)
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(registry, promhttp.HandlerOpts{Registry: registry}))
	s := &metricsServer{
		metrics: metrics,
		server:  &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second},
		url:     "http://" + listener.Addr().String() + "/metrics",
		done:    make(chan error, 1),
	}
	go func() { s.done <- s.server.Serve(listener) }()
	return s, nil
}

// stop ends the server and waits for it.
func (s *metricsServer) stop() {
	if s == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = s.server.Shutdown(ctx)
	if err := <-s.done; err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Println("kwatch: metrics server:", err)
	}
}
