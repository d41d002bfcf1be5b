package typed

import (
	"errors"
	"fmt"
	"net/http"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
)

// Clients are what a Factory talks to the API server through. Config or
// Dynamic is required.
type Clients struct {
	// Config is the REST config of the typed REST clients, one per
	// GroupVersion, and of the default RESTMapper's discovery client.
	Config *rest.Config
	// HTTPClient, if not nil, is shared by every client made from Config;
	// otherwise one is made with rest.HTTPClientFor(Config).
	HTTPClient *http.Client
	// RESTMapper maps a GroupVersionKind to its GroupVersionResource and
	// scope. Default: discovery through Config, cached in memory and
	// refreshed on a miss (restmapper.NewDeferredDiscoveryRESTMapper).
	// Without Config or RESTMapper, every informer needs WithResource.
	RESTMapper meta.RESTMapper
	// Dynamic, if not nil, feeds the informers instead of typed REST
	// clients: objects arrive as *unstructured.Unstructured and are
	// converted to T once, at ingest (generic.FromUnstructured). It is meant
	// for client-go's fake dynamic client in tests; objects that do not
	// convert are reported and skipped.
	Dynamic dynamic.Interface
}

// resolve fills in the defaults of c; it is called once, by the Factory.
func (c Clients) resolve() (Clients, error) {
	if c.Config == nil && c.Dynamic == nil {
		return c, errors.New("typed: Clients needs a rest.Config or a dynamic client")
	}
	if c.Config == nil {
		return c, nil
	}
	if c.HTTPClient == nil {
		httpClient, err := rest.HTTPClientFor(c.Config)
		if err != nil {
			return c, fmt.Errorf("typed: HTTP client for config: %w", err)
		}
		c.HTTPClient = httpClient
	}
	if c.RESTMapper == nil {
		disco, err := discovery.NewDiscoveryClientForConfigAndClient(c.Config, c.HTTPClient)
		if err != nil {
			return c, fmt.Errorf("typed: discovery client for config: %w", err)
		}
		c.RESTMapper = restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disco))
	}
	return c, nil
}
