package typed

import (
	"errors"
	"fmt"
	"reflect"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	clientmetadata "k8s.io/client-go/metadata"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/metadata"
)

// UnstructuredFor returns a Handle on the shared informer of gvr whose
// objects are *unstructured.Unstructured, fed by the dynamic client
// (Clients.Dynamic, or one made from Clients.Config), from the same Factory
// as the typed informers: one Start, one WaitForCacheSyncError, one
// Statuses and one Shutdown serve them all. Every call for the same gvr
// shares one informer; each is one hold, which the Handle's Release drops.
//
// It fails, without side effects, on a nil factory or when there is no
// dynamic client to be had.
func UnstructuredFor(factory *Factory, gvr schema.GroupVersionResource) (generic.Handle[*unstructured.Unstructured], error) {
	if factory == nil {
		return nil, errors.New("typed: nil Factory")
	}
	factory.mu.Lock()
	defer factory.mu.Unlock()
	client, err := factory.dynamicClient()
	if err != nil {
		return nil, err
	}
	key := factoryKey{goType: reflect.TypeFor[*unstructured.Unstructured]()}
	gf, err := factoryFor(factory, key, func() *generic.Factory[*unstructured.Unstructured] {
		return generic.NewFactory[*unstructured.Unstructured](generic.DynamicSource(client), nil, factory.opts...)
	})
	if err != nil {
		return nil, err
	}
	return gf.Acquire(gvr), nil
}

// MetadataFor returns a Handle on the shared metadata-only informer of gvr:
// its objects are *metav1.PartialObjectMetadata, the smallest cache, fed by
// the metadata client (Clients.Metadata, or one made from Clients.Config;
// protobuf where the server serves it), from the same Factory as the typed
// informers. Every call for the same gvr shares one informer; each is one
// hold, which the Handle's Release drops.
//
// It fails, without side effects, on a nil factory or when there is no
// metadata client to be had.
func MetadataFor(factory *Factory, gvr schema.GroupVersionResource) (generic.Handle[*metav1.PartialObjectMetadata], error) {
	if factory == nil {
		return nil, errors.New("typed: nil Factory")
	}
	factory.mu.Lock()
	defer factory.mu.Unlock()
	client, err := factory.metadataClient()
	if err != nil {
		return nil, err
	}
	key := factoryKey{goType: reflect.TypeFor[*metav1.PartialObjectMetadata]()}
	gf, err := factoryFor(factory, key, func() *generic.Factory[*metav1.PartialObjectMetadata] {
		return generic.NewFactory[*metav1.PartialObjectMetadata](metadata.MetadataSource(client), nil, factory.opts...)
	})
	if err != nil {
		return nil, err
	}
	return gf.Acquire(gvr), nil
}

// dynamicClient returns Clients.Dynamic, or makes one from Clients.Config
// the first time; f.mu must be held.
func (f *Factory) dynamicClient() (dynamic.Interface, error) {
	if f.clients.Dynamic != nil {
		return f.clients.Dynamic, nil
	}
	if f.dynamic != nil {
		return f.dynamic, nil
	}
	if f.clients.Config == nil {
		return nil, errors.New("typed: no dynamic client: set Clients.Dynamic or Clients.Config")
	}
	client, err := dynamic.NewForConfigAndClient(f.clients.Config, f.clients.HTTPClient)
	if err != nil {
		return nil, fmt.Errorf("typed: dynamic client: %w", err)
	}
	f.dynamic = client
	return client, nil
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
