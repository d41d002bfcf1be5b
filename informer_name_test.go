package generic_test

import (
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/cache"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/generictest"
)

// clientGoMetrics is a cache.InformerMetricsProvider that keeps, per
// informer identity, the last store resource version client-go reported
// and whether it made the FIFO's metrics.
type clientGoMetrics struct {
	mu     sync.Mutex
	fifo   map[string]bool
	stored map[string]float64
}

func (m *clientGoMetrics) NewQueuedItemMetric(id cache.InformerNameAndResource) cache.GaugeMetric {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.fifo[identity(id)] = true
	return gauge(func(float64) {})
}

func (m *clientGoMetrics) NewProcessingLatencyMetric(cache.InformerNameAndResource) cache.HistogramMetric {
	return histogram(func(float64) {})
}

func (m *clientGoMetrics) NewStoreResourceVersionMetric(id cache.InformerNameAndResource) cache.GaugeMetric {
	return gauge(func(v float64) {
		m.mu.Lock()
		defer m.mu.Unlock()
		m.stored[identity(id)] = v
	})
}

func (m *clientGoMetrics) snapshot(name string) (fifo bool, stored float64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	key := name + " " + configMapsGVR.String()
	return m.fifo[key], m.stored[key]
}

func identity(id cache.InformerNameAndResource) string {
	return id.Name() + " " + id.GroupVersionResource().String()
}

type gauge func(float64)

func (g gauge) Set(v float64) { g(v) }

type histogram func(float64)

func (h histogram) Observe(v float64) { h(v) }

// clientGoProvider is set once for the test binary:
// cache.SetInformerMetricsProvider takes effect once per process. Only
// informers with a reserved identity (WithInformerName) report to it.
var clientGoProvider = sync.OnceValue(func() *clientGoMetrics {
	m := &clientGoMetrics{fifo: map[string]bool{}, stored: map[string]float64{}}
	cache.SetInformerMetricsProvider(m)
	return m
})

// TestWithInformerName: client-go's own informer metrics (FIFO, store
// resource version) reach the provider set with
// cache.SetInformerMetricsProvider for the informers of a factory given an
// informer name, as client-go's informers.WithInformerName, and for no
// other.
func TestWithInformerName(t *testing.T) {
	provider := clientGoProvider()
	tests := []struct {
		name       string
		named      bool
		wantFIFO   bool
		wantStored bool
	}{
		{name: "named", named: true, wantFIFO: true, wantStored: true},
		{name: "unnamed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			name := "generic-test-" + tc.name
			var opts []generic.FactoryOption
			if tc.named {
				informerName, err := cache.NewInformerName(name)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(informerName.Release)
				opts = append(opts, generic.WithInformerName(informerName))
			}
			fake := generictest.New(t, scheme.Scheme, generictest.FactoryOptions(opts...),
				generictest.Objects(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "settings"}}))
			generictest.NewInformer[*corev1.ConfigMap](fake)
			fifo, stored := provider.snapshot(name)
			if diff := cmp.Diff([]bool{tc.wantFIFO, tc.wantStored}, []bool{fifo, stored > 0}); diff != "" {
				t.Errorf("client-go's metrics made, store resource version reported (-want +got):\n%s", diff)
			}
		})
	}
}
