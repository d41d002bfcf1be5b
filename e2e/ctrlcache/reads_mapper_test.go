package ctrlcache

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// countingMapper is a RESTMapper that counts the RESTMapping calls made
// of it.
type countingMapper struct {
	meta.RESTMapper
	mappings atomic.Int64
}

func (m *countingMapper) RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	m.mappings.Add(1)
	return m.RESTMapper.RESTMapping(gk, versions...)
}

// TestGetAsksTheMapperOnce: once a kind's informer is made, a Get does not
// ask the RESTMapper for the kind's scope again, as controller-runtime's
// reader keeps the scope its informer was made with; and the scope kept
// still answers (a cluster-scoped kind's Get ignores the key's namespace).
// Asking at every Get (controller-runtime's dynamic RESTMapper behind a
// PriorityRESTMapper: 77 allocations) made ctrlcache's Get 2.4 times
// controller-runtime's.
func TestGetAsksTheMapperOnce(t *testing.T) {
	ns, _ := testNamespace(t, 1)
	tests := []struct {
		name         string
		key          client.ObjectKey
		out          func() client.Object
		wantNotFound bool
	}{
		{"namespaced", client.ObjectKey{Namespace: ns, Name: "cm-0"}, func() client.Object { return &corev1.ConfigMap{} }, false},
		{"namespaced, not found", client.ObjectKey{Namespace: ns, Name: "missing"}, func() client.Object { return &corev1.ConfigMap{} }, true},
		{"cluster-scoped", client.ObjectKey{Name: ns}, func() client.Object { return &corev1.Namespace{} }, false},
		{"cluster-scoped, a namespace in the key", client.ObjectKey{Namespace: "elsewhere", Name: ns}, func() client.Object { return &corev1.Namespace{} }, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			httpClient, err := rest.HTTPClientFor(server.Config)
			if err != nil {
				t.Fatal(err)
			}
			dynamic, err := apiutil.NewDynamicRESTMapper(server.Config, httpClient)
			if err != nil {
				t.Fatal(err)
			}
			mapper := &countingMapper{RESTMapper: dynamic}
			c := newCache(t, crcache.Options{HTTPClient: httpClient, Mapper: mapper})
			startCache(t, c)
			ctx := context.Background()
			get := func() {
				t.Helper()
				err := c.Get(ctx, tc.key, tc.out())
				if diff := cmp.Diff(tc.wantNotFound, apierrors.IsNotFound(err)); diff != "" || (err != nil && !tc.wantNotFound) {
					t.Fatalf("Get %v: %v; NotFound (-want +got):\n%s", tc.key, err, diff)
				}
			}
			get() // makes the informer, which asks the mapper
			made := mapper.mappings.Load()
			for range 10 {
				get()
			}
			if diff := cmp.Diff(int64(0), mapper.mappings.Load()-made); diff != "" {
				t.Errorf("RESTMapping calls of 10 Gets after the first (-want +got):\n%s", diff)
			}
		})
	}
}
