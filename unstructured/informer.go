package unstructured

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apiunstructured "k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/sharding"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"github.com/generic-informers/generic"
)

// DynamicSharedInformerFactory provides access to a shared informer and
// lister for dynamic client: client-go's
// dynamicinformer.DynamicSharedInformerFactory. The factories of this
// package are generic.GenericInformerFactory values, which also implement
// generic.Releaser.
type DynamicSharedInformerFactory interface {
	// Start initializes all requested informers. They are handled in goroutines
	// which run until the stop channel gets closed.
	Start(stopCh <-chan struct{})

	// StartWithContext initializes all requested informers. They are handled in goroutines
	// which run until the context gets canceled.
	StartWithContext(ctx context.Context)

	// ForResource gives generic access to a shared informer of the matching type.
	ForResource(gvr schema.GroupVersionResource) informers.GenericInformer

	// WaitForCacheSync blocks until all started informers' caches were synced
	// or the stop channel gets closed.
	WaitForCacheSync(stopCh <-chan struct{}) map[schema.GroupVersionResource]bool

	// WaitForCacheSyncWithContext blocks until all started informers' caches were synced
	// or the context gets canceled.
	WaitForCacheSyncWithContext(ctx context.Context) cache.GVRSyncResult

	// Shutdown marks a factory as shutting down. At that point no new
	// informers can be started anymore and Start will return without
	// doing anything.
	//
	// In addition, Shutdown blocks until all goroutines have terminated.
	// Unlike client-go's, it stops the informers itself rather than waiting
	// for the stop channel given to Start to close.
	//
	// Shutdown may be called multiple times, even concurrently. All such calls will
	// block until all goroutines have terminated.
	Shutdown()
}

// TweakListOptionsFunc defines the signature of a helper function that wants
// to provide more listing options to API: client-go's
// dynamicinformer.TweakListOptionsFunc.
type TweakListOptionsFunc = generic.TweakListOptionsFunc

// DynamicSharedInformerOption defines the functional option type for
// NewDynamicSharedInformerFactoryWithOptions: client-go v0.38's
// dynamicinformer.DynamicSharedInformerOption. WithShardSelector and
// WithoutSharing make one.
type DynamicSharedInformerOption func(*dynamicOptions) *dynamicOptions

// dynamicOptions is what DynamicSharedInformerOptions set.
type dynamicOptions struct {
	shardSelector sharding.Selector
	noSharing     bool
}

// WithoutSharing makes the factory's informers share no map or list
// across the objects they cache, as client-go's dynamicinformer's do. It
// is this package's, not client-go's. By default the objects share every
// map and list equal to one cached before (labels, managedFields, a
// ReplicaSet's Pods' containers), a cache several times smaller; a write
// into a cached object in place (SetNestedField on an object from a
// Lister, which client-go forbids and its cache mutation detector
// catches) then changes every object that shares what it wrote into, and
// objects cached later with the same content. Set it if your code may
// write into cached objects: the objects are then the dynamic client's as
// they came, and the cache costs what dynamicinformer's does (in
// docs/benchmarks.md, 102 KB a realistic Pod against the drop-in's 13 KB).
// NewFilteredDynamicInformer shares nothing either way.
func WithoutSharing() DynamicSharedInformerOption {
	return func(o *dynamicOptions) *dynamicOptions {
		o.noSharing = true
		return o
	}
}

// WithShardSelector sets a shard selector on all informers, as client-go
// v0.38's dynamicinformer.WithShardSelector does
// (cache.SharedIndexInformer.SetShardSelector).
func WithShardSelector(shardSelector sharding.Selector) DynamicSharedInformerOption {
	return func(o *dynamicOptions) *dynamicOptions {
		o.shardSelector = shardSelector
		return o
	}
}

// NewDynamicSharedInformerFactoryWithOptions constructs a new instance of
// DynamicSharedInformerFactory for all namespaces with additional options,
// as client-go v0.38's dynamicinformer does. Nil options are skipped.
func NewDynamicSharedInformerFactoryWithOptions(client dynamic.Interface, defaultResync time.Duration, options ...DynamicSharedInformerOption) DynamicSharedInformerFactory {
	o := &dynamicOptions{}
	for _, option := range options {
		if option == nil {
			continue
		}
		if next := option(o); next != nil {
			o = next
		}
	}
	newFactory := generic.NewGenericInformerFactory[*apiunstructured.Unstructured]
	if o.noSharing {
		newFactory = generic.NewGenericInformerFactoryWithoutSharing[*apiunstructured.Unstructured]
	}
	factory := newFactory(generic.DynamicSource(client), defaultResync, metav1.NamespaceAll, nil, nil)
	if o.shardSelector != nil {
		factory.SetShardSelector(o.shardSelector)
	}
	return factory
}

// NewDynamicSharedInformerFactory constructs a new instance of
// DynamicSharedInformerFactory for all namespaces.
func NewDynamicSharedInformerFactory(client dynamic.Interface, defaultResync time.Duration) DynamicSharedInformerFactory {
	return NewFilteredDynamicSharedInformerFactory(client, defaultResync, metav1.NamespaceAll, nil)
}

// NewFilteredDynamicSharedInformerFactory constructs a new instance of
// DynamicSharedInformerFactory. Listers obtained via this factory will be
// subject to the same filters as specified here.
func NewFilteredDynamicSharedInformerFactory(client dynamic.Interface, defaultResync time.Duration, namespace string, tweakListOptions TweakListOptionsFunc) DynamicSharedInformerFactory {
	return generic.NewGenericInformerFactory[*apiunstructured.Unstructured](generic.DynamicSource(client), defaultResync, namespace, tweakListOptions, nil)
}

// NewFilteredDynamicInformer constructs a new informer for a dynamic type.
func NewFilteredDynamicInformer(client dynamic.Interface, gvr schema.GroupVersionResource, namespace string, resyncPeriod time.Duration, indexers cache.Indexers, tweakListOptions TweakListOptionsFunc) informers.GenericInformer {
	lw := generic.DynamicSource(client)(gvr, namespace, tweakListOptions)
	// These options cannot be invalid.
	informer, _ := generic.NewInformer[*apiunstructured.Unstructured](lw, gvr, nil,
		generic.WithResyncPeriod(resyncPeriod),
		generic.WithIndexers(indexers),
	)
	return generic.NewGenericInformer(informer)
}
