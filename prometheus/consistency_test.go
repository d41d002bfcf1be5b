package genericprometheus_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/runtime/schema"

	genericprometheus "github.com/generic-informers/generic/prometheus"
)

// TestConsistencyDelays: the counter a controller increments at each
// consistency delay (controller.ConsistencyMetricsProvider) is served as
// generic_controller_consistency_delays_total, one series per controller
// and resource; controllers of one name share theirs.
func TestConsistencyDelays(t *testing.T) {
	configMaps := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	widgets := schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}
	tests := []struct {
		name   string
		incs   map[string]map[schema.GroupVersionResource]int // by controller, by resource
		shared bool                                           // a second controller of the same names
		want   map[string]float64                             // by "controller group version resource"
	}{
		{
			name: "one controller, two resources",
			incs: map[string]map[schema.GroupVersionResource]int{"labeler": {configMaps: 3, widgets: 1}},
			want: map[string]float64{"labeler  v1 configmaps": 3, "labeler example.com v1 widgets": 1},
		},
		{
			name:   "two controllers of one name share the series",
			incs:   map[string]map[schema.GroupVersionResource]int{"labeler": {configMaps: 2}},
			shared: true,
			want:   map[string]float64{"labeler  v1 configmaps": 4},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			metrics := genericprometheus.New()
			registry := prometheus.NewPedanticRegistry()
			registry.MustRegister(metrics)
			copies := 1
			if tc.shared {
				copies = 2
			}
			for range copies {
				for name, byResource := range tc.incs {
					for resource, n := range byResource {
						counter := metrics.NewConsistencyDelaysMetric(name, resource)
						for range n {
							counter.Inc()
						}
					}
				}
			}
			families, err := registry.Gather()
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]float64{}
			for _, family := range families {
				if family.GetName() != "generic_controller_consistency_delays_total" {
					continue
				}
				for _, m := range family.GetMetric() {
					labels := map[string]string{}
					for _, l := range m.GetLabel() {
						labels[l.GetName()] = l.GetValue()
					}
					got[labels["controller"]+" "+labels["group"]+" "+labels["version"]+" "+labels["resource"]] = m.GetCounter().GetValue()
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("generic_controller_consistency_delays_total (-want +got):\n%s", diff)
			}
		})
	}
}
