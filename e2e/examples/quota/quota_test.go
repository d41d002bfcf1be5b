package main

import (
	"context"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/controller"
	"github.com/generic-informers/generic/generictest"
	"github.com/generic-informers/generic/typed"
)

func newScheme(t *testing.T) *runtime.Scheme {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	return scheme
}

func quotaIn(ns string, selector *metav1.LabelSelector) *Quota {
	return &Quota{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "quota"}, Spec: Spec{Selector: selector}}
}

func counted(ns, name string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{"app": "counted"}}}
}

// TestQuota runs the controller on generictest's Fake: the statuses it
// writes, after each change.
func TestQuota(t *testing.T) {
	tests := []struct {
		name   string
		change func(f *generictest.Fake)
		want   map[string]Status
	}{{
		name: "counts what is there",
		want: map[string]Status{
			"shop/quota": {ConfigMaps: 1, Secrets: 1, ObservedGeneration: 1},
			"lab/quota":  {ConfigMaps: 1, Secrets: 0, ObservedGeneration: 1},
		},
	}, {
		name: "a matching ConfigMap counts, in its namespace only",
		change: func(f *generictest.Fake) {
			f.Create(counted("shop", "more"))
			f.Create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "unlabelled"}})
		},
		want: map[string]Status{
			"shop/quota": {ConfigMaps: 2, Secrets: 1, ObservedGeneration: 1},
			"lab/quota":  {ConfigMaps: 1, Secrets: 0, ObservedGeneration: 1},
		},
	}, {
		name: "a deleted Secret and a relabelled ConfigMap are counted out",
		change: func(f *generictest.Fake) {
			f.Delete(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "token"}})
			f.Update(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "lab", Name: "counted"}})
		},
		want: map[string]Status{
			"shop/quota": {ConfigMaps: 1, Secrets: 0, ObservedGeneration: 1},
			"lab/quota":  {ConfigMaps: 0, Secrets: 0, ObservedGeneration: 1},
		},
	}, {
		name: "a new selector is a new generation, counted again",
		change: func(f *generictest.Fake) {
			f.Update(quotaIn("shop", &metav1.LabelSelector{}))
		},
		want: map[string]Status{
			"shop/quota": {ConfigMaps: 2, Secrets: 1, ObservedGeneration: 2},
			"lab/quota":  {ConfigMaps: 1, Secrets: 0, ObservedGeneration: 1},
		},
	}, {
		name: "an invalid selector is reported in the status",
		change: func(f *generictest.Fake) {
			f.Update(quotaIn("lab", &metav1.LabelSelector{MatchLabels: map[string]string{"app": "not a value"}}))
		},
		want: map[string]Status{
			"shop/quota": {ConfigMaps: 1, Secrets: 1, ObservedGeneration: 1},
			"lab/quota": {ObservedGeneration: 2,
				Error: `values[0][app]: Invalid value: "not a value": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`},
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fake := generictest.New(t, newScheme(t), generictest.Files("testdata/quotas.example.com.yaml", "testdata/objects.yaml"))
			quotas := generictest.NewInformer[*Quota](fake)
			c := startController(t, fake, quotas)
			fake.WaitIdle(c)
			if tc.change != nil {
				tc.change(fake)
				fake.WaitIdle(c)
			}
			got := map[string]Status{}
			all, err := quotas.Lister().List(labels.Everything())
			if err != nil {
				t.Fatal(err)
			}
			for _, q := range all {
				got[q.Namespace+"/"+q.Name] = q.Status
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("statuses (-want +got):\n%s", diff)
			}
		})
	}
}

// startController runs the controller on the Fake's informers and client
// for the test's length.
func startController(t *testing.T, fake *generictest.Fake, quotas generic.Informer[*Quota]) *controller.Controller {
	t.Helper()
	configMaps := generictest.NewUnstructuredInformer(fake, corev1.SchemeGroupVersion.WithResource("configmaps"))
	secrets := generictest.NewMetadataInformer(fake, corev1.SchemeGroupVersion.WithResource("secrets"))
	client, err := typed.ClientFor[*Quota](fake.Factory())
	if err != nil {
		t.Fatal(err)
	}
	c, err := newController(quotas, configMaps, secrets, client)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := c.Run(ctx); err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	t.Cleanup(func() {
		cancel()
		wg.Wait()
	})
	return c
}
