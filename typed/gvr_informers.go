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
)

// UnstructuredFor returns a Handle on the shared informer of gvr whose
// objects are *unstructured.Unstructured, equal to those client-go's
// dynamic informer holds, fed by Clients.Dynamic if set, else by a REST
// client made from Clients.Config that decodes JSON in one pass and, for
// built-in kinds, protobuf converted once (see
// Clients.UnstructuredFromJSON), from the same Factory
// as the typed informers: one Start, one WaitForCacheSync, one
// Statuses and one Shutdown serve them all. Every call for the same gvr
// shares one informer; each is one hold, which the Handle's Release drops.
// The factory's namespace is not applied to a resource the RESTMapper (or
// discovery) says is cluster-scoped. opts are as InformerFor's.
//
// Its objects share strings, equal managedFields fieldsV1 trees and equal
// labels maps across the factory (Clients.NoSharing keeps trees and maps
// apart), but not their other maps: on realistic Pods (those of Deployments) the cache
// holds about twice what client-go's typed informer holds (54.5 KB a Pod
// against 27.5 KB, docs/benchmarks.md), where the drop-in package
// unstructured, which shares every equal map and list, holds 13 KB, and
// InformerFor with the Go type 9.3 KB. On objects that share little they
// cost what the drop-in's do, and it syncs faster than the drop-in (595 ms
// against 994 ms for 10,000 ConfigMaps); reads cost the same. Use it for
// unstructured informers on the one factory (one Start, WaitForCacheSync
// and Shutdown with the typed ones, Handles, controller.For), and the
// drop-in for the smallest cache of many objects that repeat
// (docs/performance.md).
//
// It fails, without side effects, on a nil factory, a gvr without a
// version or a resource, when there is no dynamic client to be had, or an
// Option is invalid.
func UnstructuredFor(factory *Factory, gvr schema.GroupVersionResource, opts ...generic.InformerOption) (generic.Handle[*unstructured.Unstructured], error) {
	if factory == nil {
		return nil, errors.New("typed: nil Factory")
	}
	if err := checkGVR(gvr); err != nil {
		return nil, err
	}
	factory.recordScope(gvr)
	gf, err := genericFactoryOf[*unstructured.Unstructured](factory, factory.unstructuredSourceOf)
	if err != nil {
		return nil, err
	}
	// Not under factory.mu: the source asks the factory for the scope.
	return gf.Acquire(gvr, opts...)
}

// MetadataFor returns a Handle on the shared metadata-only informer of gvr:
// its objects are *metav1.PartialObjectMetadata, the smallest cache, fed by
// the metadata client (Clients.Metadata, or one made from Clients.Config;
// protobuf where the server serves it), from the same Factory as the typed
// informers. Every call for the same gvr shares one informer; each is one
// hold, which the Handle's Release drops.
//
// opts are as InformerFor's. It fails, without side effects, on a nil
// factory, a gvr without a version or a resource, when there is no
// metadata client to be had, or an Option is invalid.
func MetadataFor(factory *Factory, gvr schema.GroupVersionResource, opts ...generic.InformerOption) (generic.Handle[*metav1.PartialObjectMetadata], error) {
	if factory == nil {
		return nil, errors.New("typed: nil Factory")
	}
	if err := checkGVR(gvr); err != nil {
		return nil, err
	}
	factory.recordScope(gvr)
	gf, err := genericFactoryOf[*metav1.PartialObjectMetadata](factory, factory.metadataSource)
	if err != nil {
		return nil, err
	}
	// Not under factory.mu: the source asks the factory for the scope.
	return gf.Acquire(gvr, opts...)
}

// checkGVR refuses a resource no informer can list: one without a version
// or a resource name (the empty GroupVersionResource among them), before
// anything asks discovery about it. The group may be empty: the core
// group's. (generic.Factory.Acquire refuses them too.)
func checkGVR(gvr schema.GroupVersionResource) error {
	if gvr.Version == "" || gvr.Resource == "" {
		return fmt.Errorf("typed: GroupVersionResource %#v: want a version and a resource (the group may be empty, for the core group)", gvr)
	}
	return nil
}

// genericFactoryOf returns the generic.Factory of T, making it on first use
// over the Source that source returns, which delivers T.
func genericFactoryOf[T generic.Object](f *Factory, source func() (generic.Source, error)) (*generic.Factory[T], error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s, err := source()
	if err != nil {
		return nil, err
	}
	return factoryFor[T](f, factoryKey{goType: reflect.TypeFor[T]()}, s, nil)
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

// metadataSource returns the Source of MetadataFor's informers, over
// Clients.Metadata, or one made from Clients.Config the first time; f.mu
// must be held.
func (f *Factory) metadataSource() (generic.Source, error) {
	client, err := f.metadataClient()
	if err != nil {
		return nil, err
	}
	return generic.MetadataSource(client), nil
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
