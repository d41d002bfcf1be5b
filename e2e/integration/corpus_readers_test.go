package integration

import (
	"mime"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/e2e/internal/cluster"
	"github.com/generic-informers/generic/typed"
)

// unstructuredForAll syncs typed.UnstructuredFor informers of gvrs, from a
// factory over client-go's scheme (protobuf for its built-in kinds, unless
// fromJSON), and returns how to list each, and the content types the
// server answered.
func unstructuredForAll(t *testing.T, c *cluster.Cluster, prefix string, fromJSON bool, gvrs []schema.GroupVersionResource) (func(schema.GroupVersionResource) func(labels.Selector) ([]*unstructured.Unstructured, error), *servedTypes) {
	t.Helper()
	types := &servedTypes{byPath: map[string]map[string]bool{}}
	config := rest.CopyConfig(c.Config)
	config.Wrap(types.record)
	factory, err := typed.NewFactoryForClients(typed.Clients{Config: config, UnstructuredFromJSON: fromJSON}, clientgoscheme.Scheme, ownObjects(prefix))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(factory.Shutdown)
	handles := map[schema.GroupVersionResource]generic.Handle[*unstructured.Unstructured]{}
	for _, gvr := range gvrs {
		if handles[gvr], err = typed.UnstructuredFor(factory, gvr); err != nil {
			t.Fatal(err)
		}
	}
	syncAll(t, factory.Start, factory.WaitForCacheSync)
	return func(gvr schema.GroupVersionResource) func(labels.Selector) ([]*unstructured.Unstructured, error) {
		return handles[gvr].Lister().List
	}, types
}

// servedTypes records the media types of the server's answers, by path.
type servedTypes struct {
	mu     sync.Mutex
	byPath map[string]map[string]bool
}

func (c *servedTypes) record(next http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := next.RoundTrip(req)
		if err != nil {
			return resp, err
		}
		mediaType, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.byPath[req.URL.Path] == nil {
			c.byPath[req.URL.Path] = map[string]bool{}
		}
		c.byPath[req.URL.Path][mediaType] = true
		return resp, nil
	})
}

// byResource gives, for each of gvrs, the media types of the answers to
// its lists and watches across namespaces, comma-separated.
func (c *servedTypes) byResource(gvrs []schema.GroupVersionResource) map[string]string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]string{}
	for _, gvr := range gvrs {
		path := "/apis/" + gvr.Group + "/" + gvr.Version + "/" + gvr.Resource
		if gvr.Group == "" {
			path = "/api/" + gvr.Version + "/" + gvr.Resource
		}
		var types []string
		for mediaType := range c.byPath[path] {
			types = append(types, mediaType)
		}
		sort.Strings(types)
		out[gvr.String()] = strings.Join(types, ",")
	}
	return out
}
