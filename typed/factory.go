package typed

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	clientmetadata "k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/internal/share"
)

// Factory is the one factory for every kind of informer a controller
// needs: typed informers for any Go type registered in its scheme
// (InformerFor, InformerForKind), *unstructured.Unstructured informers of
// any resource (UnstructuredFor) and metadata-only ones (MetadataFor). It
// is a generic.Registry, which holds them all and starts, syncs, reshards
// and stops them as a unit (Start, WaitForCacheSync, Statuses, Shutdown,
// RemoveResource, ...: the Registry's methods), with a generic.Factory view
// per kind of object, made on first use. It shares one informer per kind,
// GroupVersionResource and selection. A Factory is safe for concurrent
// use.
type Factory struct {
	*generic.Registry
	scheme  *runtime.Scheme
	codecs  serializer.CodecFactory
	clients Clients
	kinds   kindMapper // nil: no RESTMapper and no Config

	mu sync.Mutex
	// views holds the *generic.Factory[T] view of each Go type T, and of
	// each kind served as Object.
	views map[factoryKey]any
	// restClients holds one REST client per GroupVersion and wire format.
	restClients map[restClientKey]rest.Interface
	// scopes records, for every resource handed out, whether it is
	// cluster-scoped.
	scopes map[schema.GroupVersionResource]meta.RESTScopeName
	// metadata is the client made from Config for MetadataFor, on first
	// use.
	metadata clientmetadata.Interface
	// serverCheck asks the server's version once, for
	// protobufForUnstructured; serverNoNewer is its answer.
	serverCheck   sync.Once
	serverNoNewer bool
	// interner is shared by the decoders of UnstructuredFor's informers.
	interner *share.Interner
	// sharer is shared by the decoders of the typed informers (their REST
	// clients': restClientFor).
	sharer *share.Sharer
	// unserved records the kinds handed out before the server served them
	// (unserved_kind.go).
	unserved unservedKinds
}

// factoryKey names a generic.Factory of the Factory: the Go type T it
// serves, and for T = Object the kind.
type factoryKey struct {
	goType reflect.Type
	gvk    schema.GroupVersionKind
}

type restClientKey struct {
	gv       schema.GroupVersion
	protobuf bool
	// unstructured is set for the clients of UnstructuredFor, which decode
	// into *unstructured.Unstructured (unstructuredSerializer).
	unstructured bool
	// writes: a client for Client, which decodes single objects as they are.
	writes bool
}

// NewFactory returns a Factory that lists and watches through typed REST
// clients made from config, decoding with scheme's codecs into the Go types
// registered in scheme. The Options (generic.WithNamespace,
// generic.WithResyncPeriod, ...) apply to every informer.
//
// While any of its informers is NotServed (a kind whose CRD is not
// installed yet, or deleted), the factory keeps one watch of
// CustomResourceDefinitions, metadata only, through its metadata client,
// and each CRD created or changed makes those informers ask the server at
// once: they sync within about a second of the CRD being Established
// instead of at their probe backoff's next time (up to 30 s). It needs
// list and watch of customresourcedefinitions; without, it logs once and
// the informers rely on their backoff. generic.WithServedWatch in opts
// replaces it (nil: none). See crd_watch.go.
//
// It fails on a nil config or scheme, a config that cannot make a client,
// or an invalid Option.
func NewFactory(config *rest.Config, scheme *runtime.Scheme, opts ...generic.FactoryOption) (*Factory, error) {
	if config == nil {
		return nil, errors.New("typed: nil rest.Config")
	}
	return NewFactoryForClients(Clients{Config: config}, scheme, opts...)
}

// NewFactoryForClients is NewFactory with the clients given, for a shared
// HTTP client, a RESTMapper of your own, or a (fake) dynamic client. Its
// watch of CustomResourceDefinitions (see NewFactory) goes through
// Clients.Metadata, or a metadata client made from Clients.Config; with
// neither, there is none.
func NewFactoryForClients(clients Clients, scheme *runtime.Scheme, opts ...generic.FactoryOption) (*Factory, error) {
	if scheme == nil {
		return nil, errors.New("typed: nil scheme")
	}
	// The Factory watches CRDs for its informers of kinds not served yet
	// (crd_watch.go), unless opts set a ServedWatch of their own.
	var f *Factory
	watchServed := generic.WithServedWatch(func(ctx context.Context, changed func()) { f.watchServed(ctx, changed) })
	registry, err := generic.NewRegistry(append([]generic.FactoryOption{watchServed}, opts...)...)
	if err != nil {
		return nil, err
	}
	resolved, kinds, err := clients.resolve()
	if err != nil {
		return nil, err
	}
	sharing := share.EqualTrees
	if resolved.NoSharing {
		sharing = share.StringsOnly
	}
	f = &Factory{
		Registry:    registry,
		scheme:      scheme,
		interner:    share.NewInterner(sharing),
		sharer:      share.New(!resolved.NoSharing),
		codecs:      serializer.NewCodecFactory(scheme),
		clients:     resolved,
		kinds:       kinds,
		views:       map[factoryKey]any{},
		restClients: map[restClientKey]rest.Interface{},
		scopes:      map[schema.GroupVersionResource]meta.RESTScopeName{},
	}
	return f, nil
}

// Scheme returns the scheme the factory was made with: the Go types it
// serves, and their GroupVersionKinds (scheme.ObjectKinds, scheme.New), so
// that code holding only the factory can build objects, owner references
// and apply configurations. It is the caller's scheme, not a copy: register
// nothing in it once the factory is in use.
func (f *Factory) Scheme() *runtime.Scheme { return f.scheme }

// factoryFor returns the view under key, making it on first use over
// source with convert; f.mu must be held.
func factoryFor[T generic.Object](f *Factory, key factoryKey, source generic.Source, convert generic.Converter[T]) (*generic.Factory[T], error) {
	if v, ok := f.views[key]; ok {
		gf, ok := v.(*generic.Factory[T])
		if !ok {
			return nil, fmt.Errorf("typed: view of %v holds a %T", key.goType, v)
		}
		return gf, nil
	}
	// The source is called from Acquire, not under f.mu: clusterScoped
	// locks it.
	source = f.unservedAware(ignoreNamespaceWhenClusterScoped(source, f.clusterScoped))
	gf, err := generic.NewFactoryOn(f.Registry, source, convert)
	if err != nil {
		return nil, err
	}
	f.views[key] = gf
	return gf, nil
}

// restClientFor returns the shared REST client of gv; f.mu must be held.
func (f *Factory) restClientFor(gv schema.GroupVersion, protobuf bool) (rest.Interface, error) {
	key := restClientKey{gv: gv, protobuf: protobuf}
	if client, ok := f.restClients[key]; ok {
		return client, nil
	}
	client, err := newRESTClient(f.clients, f.codecs, f.sharer, gv, protobuf)
	if err != nil {
		return nil, err
	}
	f.restClients[key] = client
	return client, nil
}

func (f *Factory) clusterScoped(gvr schema.GroupVersionResource) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.scopes[gvr] == meta.RESTScopeNameRoot
}
