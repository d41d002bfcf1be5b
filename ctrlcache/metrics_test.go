package ctrlcache

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/generictest"
	genericprometheus "github.com/generic-informers/generic/prometheus"
)

// configMapsSeries is the name and labels of an informer metric of
// ConfigMaps, as gathered.
func configMapsSeries(name string) string {
	return name + `{group="",resource="configmaps",shard="",version="v1"}`
}

// gatherInformerMetrics gathers registry and returns the value of every
// series of generic_informer_objects and _objects_encoded_bytes.
func gatherInformerMetrics(t *testing.T, registry prometheus.Gatherer) map[string]float64 {
	t.Helper()
	families, err := registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, family := range families {
		if family.GetName() != "generic_informer_objects" && family.GetName() != "generic_informer_objects_encoded_bytes" {
			continue
		}
		for _, metric := range family.GetMetric() {
			var labels []string
			for _, l := range metric.GetLabel() {
				labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			got[family.GetName()+"{"+strings.Join(labels, ",")+"}"] = metric.GetGauge().GetValue()
		}
	}
	return got
}

// startedCache makes a cache of options over fake, reads ConfigMaps
// through it, and returns the ConfigMaps it holds; the cache stops with
// the test.
func startedCache(t *testing.T, fake *generictest.Fake, options Options) []corev1.ConfigMap {
	t.Helper()
	c, err := BuilderWithOptions(options)(fake.Config(), crcache.Options{Scheme: scheme.Scheme, Mapper: fake.RESTMapper()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Start: %v", err)
		}
	})
	waitCtx, cancelWait := context.WithTimeout(ctx, time.Minute)
	defer cancelWait()
	if !c.WaitForCacheSync(waitCtx) {
		t.Fatal("the cache did not start within a minute")
	}
	var list corev1.ConfigMapList
	if err := c.List(ctx, &list, client.InNamespace("ns")); err != nil { // makes the informer, and waits for its sync
		t.Fatal(err)
	}
	return list.Items
}

// TestMetricsInControllerRuntimesRegistry: with Options.Metrics, the
// informers' metrics, the cache's encoded bytes among them, are gathered
// from controller-runtime's metrics.Registry, which a manager's metrics
// endpoint serves; two caches with Metrics register once and add up;
// without it nothing is measured.
func TestMetricsInControllerRuntimesRegistry(t *testing.T) {
	tests := []struct {
		name string
		// caches are the Options of the caches made, one after the other.
		caches []Options
		// measured is how many of them measure their informers.
		measured int
	}{
		{name: "without Metrics", caches: []Options{{}}, measured: 0},
		{name: "Metrics", caches: []Options{{Metrics: true}}, measured: 1},
		{name: "two caches with Metrics", caches: []Options{{Metrics: true}, {Metrics: true, NoSharing: true}}, measured: 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fake := generictest.New(t, scheme.Scheme, generictest.Objects(
				&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a"}, Data: map[string]string{"k": "v"}},
				&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "b"}, Data: map[string]string{"payload": strings.Repeat("x", 1000)}},
			))
			var cached []corev1.ConfigMap
			for _, options := range tc.caches {
				cached = startedCache(t, fake, options)
			}
			var encoded int
			for _, cm := range cached {
				encoded += cm.Size()
			}
			want := map[string]float64{}
			if tc.measured > 0 {
				want[configMapsSeries("generic_informer_objects")] = float64(tc.measured * len(cached))
				want[configMapsSeries("generic_informer_objects_encoded_bytes")] = float64(tc.measured * encoded)
			}
			if diff := cmp.Diff(want, gatherInformerMetrics(t, crmetrics.Registry)); diff != "" {
				t.Errorf("gathered from controller-runtime's metrics.Registry (%d ConfigMaps cached) (-want +got):\n%s", len(cached), diff)
			}
		})
	}
}

// TestRegister: the informers' collector is registered in a registry that
// has none, or the one registered there already is reported to; anything
// else that holds its names is an error naming Options.Metrics.
func TestRegister(t *testing.T) {
	tests := []struct {
		name string
		// before registers what the registry holds before, and returns
		// the Metrics the informers must then report to (nil: m).
		before func(registry *prometheus.Registry) *genericprometheus.Metrics
		want   string
	}{
		{"an empty registry", func(*prometheus.Registry) *genericprometheus.Metrics { return nil }, ""},
		{"the program's own InformerCollector", func(registry *prometheus.Registry) *genericprometheus.Metrics {
			theirs := genericprometheus.New()
			registry.MustRegister(theirs.InformerCollector())
			return theirs
		}, ""},
		{"another metric of the name", func(registry *prometheus.Registry) *genericprometheus.Metrics {
			registry.MustRegister(prometheus.NewGauge(prometheus.GaugeOpts{Name: "generic_informer_objects", Help: "Not ours."}))
			return nil
		}, "ctrlcache: Options.Metrics: registering the informers' metrics in controller-runtime's metrics.Registry: "},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			registry := prometheus.NewPedanticRegistry()
			reportTo := tc.before(registry)
			m := genericprometheus.New()
			if reportTo == nil {
				reportTo = m
			}
			provider, err := register(registry, m)
			var got string // the error's first len(tc.want) bytes: the cause is client_golang's
			if err != nil {
				got = err.Error()[:min(len(tc.want), len(err.Error()))]
			}
			if diff := cmp.Diff(tc.want, got); diff != "" || (err != nil) != (tc.want != "") {
				t.Fatalf("register: error %v (-want +got):\n%s", err, diff)
			}
			if err != nil {
				return
			}
			informer := provider.NewInformerMetrics(generic.InformerID{GVR: corev1.SchemeGroupVersion.WithResource("configmaps")},
				generic.InformerGauges{ObjectsCached: func() int { return 3 }, EncodedBytes: func() int64 { return 700 }})
			defer informer.Delete()
			want := map[string]float64{
				configMapsSeries("generic_informer_objects"):               3,
				configMapsSeries("generic_informer_objects_encoded_bytes"): 700,
			}
			reporting := prometheus.NewPedanticRegistry()
			reporting.MustRegister(reportTo.InformerCollector())
			if diff := cmp.Diff(want, gatherInformerMetrics(t, reporting)); diff != "" {
				t.Errorf("what the Metrics reported to holds (-want +got):\n%s", diff)
			}
		})
	}
}
