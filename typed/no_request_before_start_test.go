package typed_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"

	"github.com/generic-informers/generic/typed"
)

// TestNothingTalksToTheServerBeforeStart: with a RESTMapper given, making
// a factory and informers of every kind sends no request; the informers'
// lists (and, for UnstructuredFor, the server's version, which decides
// protobuf) come once Start has run. UnstructuredFor used to ask /version
// when it was called.
func TestNothingTalksToTheServerBeforeStart(t *testing.T) {
	var mu sync.Mutex
	var paths []string
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		paths = append(paths, r.URL.Path)
		mu.Unlock()
		http.NotFound(w, r)
	}))
	defer server.Close()
	requested := func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(paths)
	}

	factory, err := typed.NewFactoryForClients(typed.Clients{Config: &rest.Config{Host: server.URL}, RESTMapper: newMapper()}, scheme.Scheme)
	check(t, err)
	defer factory.Shutdown()
	_, err = typed.InformerFor[*corev1.Pod](factory)
	check(t, err)
	_, err = typed.UnstructuredFor(factory, configMapsGVR)
	check(t, err)
	_, err = typed.MetadataFor(factory, secretsGVR)
	check(t, err)
	if diff := cmp.Diff([]string(nil), requested()); diff != "" {
		t.Fatalf("requests before Start (-want +got):\n%s", diff)
	}

	factory.Start(context.Background())
	// Bounded only to end the wait; the requests come at once.
	err = wait.PollUntilContextTimeout(context.Background(), 10*time.Millisecond, wait.ForeverTestTimeout, true, func(context.Context) (bool, error) {
		got := requested()
		return slices.Contains(got, "/version") && slices.Contains(got, "/api/v1/configmaps"), nil
	})
	if err != nil {
		t.Errorf("after Start, requests %q: want /version and the configmaps list among them", requested())
	}
}
