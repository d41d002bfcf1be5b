package genericprometheus_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/generic-informers/generic"
	genericprometheus "github.com/generic-informers/generic/prometheus"
)

// controllerRuntimeRegistry is a registry that holds what
// controller-runtime's metrics.Registry holds in a program that links its
// controllers: its workqueue metrics (workqueue_depth, with its labels).
func controllerRuntimeRegistry(t *testing.T) *prometheus.Registry {
	t.Helper()
	registry := prometheus.NewPedanticRegistry()
	depth := prometheus.NewGaugeVec(prometheus.GaugeOpts{Subsystem: "workqueue", Name: "depth", Help: "Current depth of workqueue"}, []string{"name", "controller", "priority"})
	registry.MustRegister(depth)
	depth.WithLabelValues("pods", "pods", "").Set(1)
	return registry
}

// TestInformerCollector: the InformerCollector registers where
// controller-runtime's workqueue metrics are, which Metrics cannot; it
// serves the informers' metrics and none of Metrics' workqueue metrics; a
// second one is an AlreadyRegisteredError whose ExistingCollector is a
// provider that reports to the first's Metrics.
func TestInformerCollector(t *testing.T) {
	tests := []struct {
		name string
		// register registers collectors of m in registry, and returns the
		// provider an informer then reports to, and the error.
		register func(registry *prometheus.Registry, m *genericprometheus.Metrics) (generic.MetricsProvider, error)
		want     string
	}{
		{"Metrics itself is refused", func(registry *prometheus.Registry, m *genericprometheus.Metrics) (generic.MetricsProvider, error) {
			return m, registry.Register(m)
		}, "refused"},
		{"its InformerCollector", func(registry *prometheus.Registry, m *genericprometheus.Metrics) (generic.MetricsProvider, error) {
			return m, registry.Register(m.InformerCollector())
		}, "registered"},
		{"a second InformerCollector: the first, which reports to m", func(registry *prometheus.Registry, m *genericprometheus.Metrics) (generic.MetricsProvider, error) {
			registry.MustRegister(m.InformerCollector())
			err := registry.Register(genericprometheus.New().InformerCollector())
			var already prometheus.AlreadyRegisteredError
			if !errors.As(err, &already) {
				return nil, err
			}
			provider, ok := already.ExistingCollector.(generic.MembershipMetricsProvider)
			if !ok {
				return nil, errors.New("the existing collector is no provider")
			}
			return provider, nil
		}, "registered"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			registry := controllerRuntimeRegistry(t)
			m := genericprometheus.New()
			provider, err := tc.register(registry, m)
			if err != nil {
				if diff := cmp.Diff(tc.want, "refused"); diff != "" {
					t.Fatalf("registration: %v (-want +got):\n%s", err, diff)
				}
				return
			}
			informer := provider.NewInformerMetrics(generic.InformerID{GVR: configMaps}, generic.InformerGauges{
				ObjectsCached: func() int { return 2 },
				EncodedBytes:  func() int64 { return 300 },
			})
			defer informer.Delete()
			m.NewDepthMetric("queue").Inc() // a workqueue metric of m, which the collector leaves out
			got := scrape(t, registry)
			for name := range got {
				if !strings.HasPrefix(name, "generic_informer_objects") && !strings.HasPrefix(name, "workqueue_") {
					delete(got, name)
				}
			}
			want := map[string]float64{
				series("generic_informer_objects"):               2,
				series("generic_informer_objects_encoded_bytes"): 300,
				"workqueue_depth{controller=pods,name=pods}":     1,
			}
			if diff := cmp.Diff(tc.want, "registered"); diff != "" {
				t.Fatalf("registration (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("scrape (-want +got):\n%s\nall: %v", diff, slices.Sorted(mapKeys(got)))
			}
		})
	}
}
