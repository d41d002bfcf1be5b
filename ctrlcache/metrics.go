package ctrlcache

import (
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/generic-informers/generic"
	genericprometheus "github.com/generic-informers/generic/prometheus"
)

// withMetrics returns the informer options of every informer of a cache
// made with options: Options.Informer, then, with Options.Metrics, the
// process's provider.
func withMetrics(options Options) ([]generic.InformerOption, error) {
	informerOptions := slices.Clone(options.Informer)
	if !options.Metrics {
		return informerOptions, nil
	}
	provider, err := registeredMetrics()
	if err != nil {
		return nil, err
	}
	return append(informerOptions, generic.WithMetricsProvider(provider)), nil
}

// processMetrics is what every cache made with Options.Metrics in the
// process reports to: one provider, registered in controller-runtime's
// metrics.Registry by the first such cache.
var processMetrics struct {
	mu       sync.Mutex
	provider generic.MetricsProvider
}

// registeredMetrics returns the process's provider, registering it in
// controller-runtime's metrics.Registry the first time. A registration
// that failed is tried again by the next cache.
func registeredMetrics() (generic.MetricsProvider, error) {
	processMetrics.mu.Lock()
	defer processMetrics.mu.Unlock()
	if processMetrics.provider == nil {
		provider, err := register(crmetrics.Registry, genericprometheus.New())
		if err != nil {
			return nil, err
		}
		processMetrics.provider = provider
	}
	return processMetrics.provider, nil
}

// register registers m's InformerCollector (everything but the workqueue
// metrics, which controller-runtime registers there itself) in registry,
// and returns the provider the informers are to report to: m, or, if the
// program registered an InformerCollector of its own there already, that
// one, which reports to its Metrics.
func register(registry prometheus.Registerer, m *genericprometheus.Metrics) (generic.MetricsProvider, error) {
	err := registry.Register(m.InformerCollector())
	if err == nil {
		return m, nil
	}
	var already prometheus.AlreadyRegisteredError
	if errors.As(err, &already) {
		if provider, ok := already.ExistingCollector.(generic.MetricsProvider); ok {
			return provider, nil
		}
	}
	return nil, fmt.Errorf("ctrlcache: Options.Metrics: registering the informers' metrics in controller-runtime's metrics.Registry: %w", err)
}
