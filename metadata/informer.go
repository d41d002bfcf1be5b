package metadata

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/sharding"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/tools/cache"

	"github.com/generic-informers/generic"
)

// SharedInformerFactory provides access to a shared informer and lister for
// the metadata client: client-go's metadatainformer.SharedInformerFactory.
// The factories of this package are generic.GenericInformerFactory values,
// which also implement generic.Releaser, and are safe
// for concurrent use. As with client-go's, an informer asked for after
// Start runs at the next Start.
type SharedInformerFactory interface {
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
// metadatainformer.TweakListOptionsFunc.
type TweakListOptionsFunc = generic.TweakListOptionsFunc

// SharedInformerOption defines the functional option type for the factory
// of NewSharedInformerFactoryWithOptions: client-go's
// metadatainformer.SharedInformerOption. WithTransform makes one.
type SharedInformerOption func(*sharedInformerOptions) *sharedInformerOptions

// sharedInformerOptions is what SharedInformerOptions set.
type sharedInformerOptions struct {
	transform     cache.TransformFunc
	shardSelector sharding.Selector
}

// WithShardSelector sets a shard selector on all informers, as client-go
// v0.38's metadatainformer.WithShardSelector does
// (cache.SharedIndexInformer.SetShardSelector).
func WithShardSelector(shardSelector sharding.Selector) SharedInformerOption {
	return func(o *sharedInformerOptions) *sharedInformerOptions {
		o.shardSelector = shardSelector
		return o
	}
}

// WithTransform sets a transform on all informers, as client-go's
// metadatainformer.WithTransform does. It is generic.WithTransform: the
// transform runs on every object before it is stored, and a result that is
// not a non-nil *metav1.PartialObjectMetadata is reported and the object
// stored untransformed, where client-go would store it as it is.
func WithTransform(transform cache.TransformFunc) SharedInformerOption {
	return func(o *sharedInformerOptions) *sharedInformerOptions {
		o.transform = transform
		return o
	}
}

// NewSharedInformerFactory constructs a new instance of SharedInformerFactory
// for all namespaces, as client-go's metadatainformer.NewSharedInformerFactory
// does.
func NewSharedInformerFactory(client metadata.Interface, defaultResync time.Duration) SharedInformerFactory {
	return NewFilteredSharedInformerFactory(client, defaultResync, metav1.NamespaceAll, nil)
}

// NewFilteredSharedInformerFactory constructs a new instance of
// SharedInformerFactory. Listers obtained via this factory will be subject to
// the same filters as specified here.
func NewFilteredSharedInformerFactory(client metadata.Interface, defaultResync time.Duration, namespace string, tweakListOptions TweakListOptionsFunc) SharedInformerFactory {
	return generic.NewGenericInformerFactory[*metav1.PartialObjectMetadata](generic.MetadataSource(client), defaultResync, namespace, tweakListOptions, nil)
}

// NewSharedInformerFactoryWithOptions constructs a new instance of
// SharedInformerFactory for all namespaces with additional options, as
// client-go's metadatainformer.NewSharedInformerFactoryWithOptions does. Nil
// options are ignored.
func NewSharedInformerFactoryWithOptions(client metadata.Interface, defaultResync time.Duration, options ...SharedInformerOption) SharedInformerFactory {
	o := &sharedInformerOptions{}
	for _, opt := range options {
		if opt == nil {
			continue
		}
		if next := opt(o); next != nil {
			o = next
		}
	}
	factory := generic.NewGenericInformerFactory[*metav1.PartialObjectMetadata](generic.MetadataSource(client), defaultResync, metav1.NamespaceAll, nil, o.transform)
	if o.shardSelector != nil {
		factory.SetShardSelector(o.shardSelector)
	}
	return factory
}

// NewFilteredMetadataInformer constructs a new informer for a metadata type,
// as client-go's metadatainformer.NewFilteredMetadataInformer does. Its
// Informer() is not started: run it with Informer().Run or RunWithContext.
// Its Lister() is a shim over a generic.Lister of
// *metav1.PartialObjectMetadata.
func NewFilteredMetadataInformer(client metadata.Interface, gvr schema.GroupVersionResource, namespace string, resyncPeriod time.Duration, indexers cache.Indexers, tweakListOptions TweakListOptionsFunc) informers.GenericInformer {
	lw := generic.MetadataSource(client)(gvr, namespace, tweakListOptions)
	// These options cannot be invalid.
	informer, _ := generic.NewInformer[*metav1.PartialObjectMetadata](lw, gvr, nil,
		generic.WithResyncPeriod(resyncPeriod),
		generic.WithIndexers(indexers),
	)
	return generic.NewGenericInformer(informer)
}
