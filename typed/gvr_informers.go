package typed

import (
	"errors"
	"fmt"
	"reflect"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientmetadata "k8s.io/client-go/metadata"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/metadata"
)

// UnstructuredFor returns a Handle on the shared informer of gvr whose
// objects are *unstructured.Unstructured, equal to those client-go's
// dynamic informer holds, fed by Clients.Dynamic if set, else by a REST
// client made from Clients.Config that decodes JSON in one pass and, for
// built-in kinds, protobuf converted once (see
// Clients.UnstructuredFromJSON), from the same Factory
// as the typed informers: one Start, one WaitForCacheSyncError, one
// Statuses and one Shutdown serve them all. Every call for the same gvr
// shares one informer; each is one hold, which the Handle's Release drops.
// The factory's namespace is not applied to a resource the RESTMapper (or
// discovery) says is cluster-scoped. Of opts, WithOptions applies;
// WithResource has nothing to do here.
//
// It fails, without side effects, on a nil factory or when there is no
// dynamic client to be had.
func UnstructuredFor(factory *Factory, gvr schema.GroupVersionResource, opts ...InformerOption) (generic.Handle[*unstructured.Unstructured], error) {
	if factory == nil {
		return nil, errors.New("typed: nil Factory")
	}
	factory.recordScope(gvr)
	// The server's version, for protobuf, is asked for here, once, and not
	// from the Source, which the generic factory calls with its lock held.
	factory.protobufForUnstructured(gvr.GroupVersion())
	gf, err := genericFactoryOf(factory, func(source generic.Source) *generic.Factory[*unstructured.Unstructured] {
		return generic.NewFactory[*unstructured.Unstructured](ignoreNamespaceWhenClusterScoped(source, factory.clusterScoped), nil, factory.opts...)
	}, factory.unstructuredSourceOf)
	if err != nil {
		return nil, err
	}
	// Not under factory.mu: the source asks the factory for the scope.
	return gf.Acquire(gvr, resolveInformerOptions(opts).options...), nil
}

// MetadataFor returns a Handle on the shared metadata-only informer of gvr:
// its objects are *metav1.PartialObjectMetadata, the smallest cache, fed by
// the metadata client (Clients.Metadata, or one made from Clients.Config;
// protobuf where the server serves it), from the same Factory as the typed
// informers. Every call for the same gvr shares one informer; each is one
// hold, which the Handle's Release drops.
//
// Of opts, WithOptions applies. It fails, without side effects, on a nil
// factory or when there is no metadata client to be had.
func MetadataFor(factory *Factory, gvr schema.GroupVersionResource, opts ...InformerOption) (generic.Handle[*metav1.PartialObjectMetadata], error) {
	if factory == nil {
		return nil, errors.New("typed: nil Factory")
	}
	factory.recordScope(gvr)
	gf, err := genericFactoryOf(factory, func(client clientmetadata.Interface) *generic.Factory[*metav1.PartialObjectMetadata] {
		return generic.NewFactory[*metav1.PartialObjectMetadata](ignoreNamespaceWhenClusterScoped(metadata.MetadataSource(client), factory.clusterScoped), nil, factory.opts...)
	}, factory.metadataClient)
	if err != nil {
		return nil, err
	}
	// Not under factory.mu: the source asks the factory for the scope.
	return gf.Acquire(gvr, resolveInformerOptions(opts).options...), nil
}

// genericFactoryOf returns the generic.Factory of T, making it on first use
// with newFactory over the client that client returns.
func genericFactoryOf[T generic.Object, C any](f *Factory, newFactory func(C) *generic.Factory[T], client func() (C, error)) (*generic.Factory[T], error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, err := client()
	if err != nil {
		return nil, err
	}
	return factoryFor(f, factoryKey{goType: reflect.TypeFor[T]()}, func() *generic.Factory[T] { return newFactory(c) })
}

// recordScope records whether gvr is cluster-scoped, as the RESTMapper or
// discovery says, so that the factory's namespace is not applied to it (as
// for typed informers). A scope that cannot be found is left unknown: the
// namespace applies, as in client-go's dynamic and metadata factories.
func (f *Factory) recordScope(gvr schema.GroupVersionResource) {
	if f.kinds == nil {
		return
	}
	scope, err := f.kinds.scopeOf(gvr)
	if err != nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.scopes[gvr] = scope
}

// unstructuredSourceOf returns the Source of UnstructuredFor's informers:
// through Clients.Dynamic if set, else through REST clients made from
// Clients.Config (unstructuredSource); f.mu must be held.
func (f *Factory) unstructuredSourceOf() (generic.Source, error) {
	switch {
	case f.clients.Dynamic != nil:
		return generic.DynamicSource(f.clients.Dynamic), nil
	case f.clients.Config == nil:
		return nil, errors.New("typed: no client for unstructured informers: set Clients.Dynamic or Clients.Config")
	}
	return f.unstructuredSource(), nil
}

// metadataClient returns Clients.Metadata, or makes one from
// Clients.Config the first time; f.mu must be held.
func (f *Factory) metadataClient() (clientmetadata.Interface, error) {
	if f.clients.Metadata != nil {
		return f.clients.Metadata, nil
	}
	if f.metadata != nil {
		return f.metadata, nil
	}
	if f.clients.Config == nil {
		return nil, errors.New("typed: no metadata client: set Clients.Metadata or Clients.Config")
	}
	client, err := clientmetadata.NewForConfigAndClient(f.clients.Config, f.clients.HTTPClient)
	if err != nil {
		return nil, fmt.Errorf("typed: metadata client: %w", err)
	}
	f.metadata = client
	return client, nil
}
