package genericprometheus_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	kubefake "k8s.io/client-go/kubernetes/fake"

	"github.com/generic-informers/generic"
	genericprometheus "github.com/generic-informers/generic/prometheus"
)

// TestMembershipScrape runs a replica of a membership alone: once it owns
// its shard, the scrape says it is shard 0 of 1 of a membership of one,
// and owns it; once it has left, the series are gone.
func TestMembershipScrape(t *testing.T) {
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{configMaps: "ConfigMapList"}, configMap("a", "one"))
	metrics := genericprometheus.New()
	registry := prometheus.NewPedanticRegistry()
	registry.MustRegister(metrics)
	member, err := generic.NewMember(generic.Membership{Leases: kubefake.NewClientset().CoordinationV1().Leases("ns"), Group: "g", Identity: "a",
		RetryPeriod: 20 * time.Millisecond, RenewDeadline: 300 * time.Millisecond, LeaseDuration: 600 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	factory, err := generic.NewFactory[*unstructured.Unstructured](generic.DynamicSource(client), nil, generic.WithMetricsProvider(metrics),
		generic.WithMembership(member))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := factory.Acquire(configMaps); err != nil {
		t.Fatal(err)
	}
	factory.Start(ctx)
	if err := wait.PollUntilContextCancel(ctx, 10*time.Millisecond, true, func(context.Context) (bool, error) {
		status, _ := factory.Membership()
		return status.Owns, nil
	}); err != nil {
		t.Fatal(err)
	}
	got := membershipSeries(scrape(t, registry))
	if ts := got["generic_membership_last_reshard_timestamp_seconds{group=g,identity=a}"]; ts < float64(time.Now().Add(-time.Minute).Unix()) {
		t.Errorf("last_reshard_timestamp_seconds = %v, want about now", ts)
	}
	delete(got, "generic_membership_last_reshard_timestamp_seconds{group=g,identity=a}")
	want := map[string]float64{
		"generic_membership_members{group=g,identity=a}":      1,
		"generic_membership_shard_index{group=g,identity=a}":  0,
		"generic_membership_shard_count{group=g,identity=a}":  1,
		"generic_membership_owns{group=g,identity=a}":         1,
		"generic_membership_stepped_down{group=g,identity=a}": 0,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("membership series (-want +got):\n%s", diff)
	}
	factory.Shutdown()
	if got := membershipSeries(scrape(t, registry)); len(got) > 0 {
		t.Errorf("membership series after the replica left: %v", got)
	}
}

func membershipSeries(samples map[string]float64) map[string]float64 {
	out := map[string]float64{}
	for name, v := range samples {
		if strings.HasPrefix(name, "generic_membership_") {
			out[name] = v
		}
	}
	return out
}
