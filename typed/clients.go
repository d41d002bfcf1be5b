package typed

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
)

// Clients are what a Factory talks to the API server through. Config or
// Dynamic is required. UnstructuredFor's informers are fed by Dynamic when
// it is set (and then the typed ones too), else by REST clients made from
// Config that decode straight into *unstructured.Unstructured (see
// UnstructuredFromJSON); Metadata feeds MetadataFor's. Those not given are
// made from Config when first needed.
type Clients struct {
	// Config is the REST config of the typed REST clients, one per
	// GroupVersion, and of the default RESTMapper's discovery client.
	Config *rest.Config
	// HTTPClient, if not nil, is shared by every client made from Config;
	// otherwise one is made with rest.HTTPClientFor(Config).
	HTTPClient *http.Client
	// RESTMapper maps a GroupVersionKind to its GroupVersionResource and
	// scope. Default: discovery through Config of each kind's own
	// GroupVersion, when an informer of it is first asked for, keeping only
	// the mappings found. Without Config or RESTMapper, no kind's resource
	// can be found.
	RESTMapper meta.RESTMapper
	// Dynamic, if not nil, feeds the informers instead of typed REST
	// clients: objects arrive as *unstructured.Unstructured and are
	// converted to T once, at ingest (generic.FromUnstructured). It is meant
	// for client-go's fake dynamic client in tests; objects that do not
	// convert are reported and skipped.
	Dynamic dynamic.Interface
	// Metadata, if not nil, feeds the metadata-only informers of
	// MetadataFor; otherwise one is made from Config.
	Metadata metadata.Interface
	// UnstructuredFromJSON, if true, makes UnstructuredFor's informers ask
	// for JSON only, as client-go's dynamic client does. By default (with
	// Config and no Dynamic), they ask for protobuf for the built-in kinds
	// the scheme knows, when the server is no newer than the k8s.io/api
	// this program is built with, and convert each object once: same
	// objects, several times faster. Set it if the objects must hold fields
	// the scheme's Go types lack (a server with fields behind a version
	// check this cannot see, such as a patched or aggregated API server of
	// a built-in GroupVersion).
	UnstructuredFromJSON bool
	// NoSharing, if true, makes every cached object hold maps, slices and
	// pointed-to structs of its own only. By default the objects of a
	// Factory's informers share what repeats across them, as they are
	// decoded:
	//
	//   - strings that repeat are one string (invisible: Go strings
	//     cannot be changed), in every informer;
	//   - equal managedFields fieldsV1 are one byte slice (typed) or one
	//     tree (UnstructuredFor);
	//   - equal metadata.labels maps are one map, and in typed objects
	//     equal maps of strings (annotations, selectors, a ConfigMap's
	//     data of at most 1 KiB) and equal ResourceLists are one map too;
	//   - in typed objects, equal slices and pointed-to structs of flat
	//     values (no map or interface in them: ownerReferences,
	//     tolerations, ports, env, args, probes, managedFields) are one
	//     slice or struct.
	//
	// Typed objects' slices are also remade at their length (a decoder's
	// appends leave spare capacity), with sharing or without.
	//
	// On realistic Pods (docs/benchmarks.md, BenchmarkCacheSize; client-go
	// v0.38, whose FieldsV1 are interned) this makes a typed cache about a
	// third the size of client-go's (0.34x; 0.83x with NoSharing), and on
	// ConfigMaps with payloads of their own 0.87x (generic.WithCompactStore
	// goes further, for caches seldom read). Sharing is invisible to
	// code that treats cached objects as read-only, as client-go requires:
	// a caller that writes into a cached object's map or slice
	// (pod.Labels["x"] = "y", or pod.Spec.Tolerations[0].Key = "k", before
	// an Update, instead of on a DeepCopy) would write into every object
	// that shares it. Set NoSharing if yours may (what it costs: the
	// memory above, nothing else). A transform (generic.WithTransform)
	// gets each object with labels (and, typed, annotations) of its own,
	// which it may edit in place; set NoSharing if it edits other maps,
	// the elements of slices, pointed-to structs or managedFields in place
	// (setting a field, pod.ManagedFields = nil, is not in place). Strings
	// stay shared either way.
	NoSharing bool
}

// resolve fills in the defaults of c and returns how to find the resource
// of a kind (nil: none); it is called once, by the
// Factory.
func (c Clients) resolve() (Clients, kindMapper, error) {
	if c.Config == nil && c.Dynamic == nil {
		return c, nil, errors.New("typed: Clients needs a rest.Config or a dynamic client")
	}
	if c.Config != nil && c.HTTPClient == nil {
		httpClient, err := rest.HTTPClientFor(c.Config)
		if err != nil {
			return c, nil, fmt.Errorf("typed: HTTP client for config: %w", err)
		}
		c.HTTPClient = httpClient
	}
	switch {
	case c.RESTMapper != nil:
		return c, restMapperKinds{c.RESTMapper}, nil
	case c.Config != nil:
		disco, err := discovery.NewDiscoveryClientForConfigAndClient(c.Config, withTimeout(c.HTTPClient, c.Config.Timeout))
		if err != nil {
			return c, nil, fmt.Errorf("typed: discovery client for config: %w", err)
		}
		return c, newDiscoveryKinds(disco), nil
	}
	return c, nil, nil
}

// discoveryTimeout bounds a discovery request when the config sets no
// timeout, as client-go's discovery.NewDiscoveryClientForConfig does.
const discoveryTimeout = 32 * time.Second

// withTimeout returns client, sharing its transport, with a timeout on each
// request: timeout if set, else discoveryTimeout. The shared client has none,
// since its watches must stay open, but a discovery request that hangs would
// hang InformerFor with it.
func withTimeout(client *http.Client, timeout time.Duration) *http.Client {
	if client.Timeout > 0 {
		return client
	}
	bounded := *client
	bounded.Timeout = discoveryTimeout
	if timeout > 0 {
		bounded.Timeout = timeout
	}
	return &bounded
}
