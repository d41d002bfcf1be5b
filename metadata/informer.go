package metadata

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/tools/cache"

	"github.com/generic-informers/generic"
)

// SharedInformerFactory provides access to a shared informer and lister for
// the metadata client: client-go's metadatainformer.SharedInformerFactory.
// The factories of this package are safe for concurrent use. As with
// client-go's, an informer asked for after Start runs at the next Start
// (generic.WithDeferredStart).
type SharedInformerFactory interface {
	// Start initializes all requested informers. They are handled in goroutines
	// which run until the stop channel gets closed.
	Start(stopCh <-chan struct{})

	// ForResource gives generic access to a shared informer of the matching type.
	ForResource(gvr schema.GroupVersionResource) informers.GenericInformer

	// WaitForCacheSync blocks until all started informers' caches were synced
	// or the stop channel gets closed.
	WaitForCacheSync(stopCh <-chan struct{}) map[schema.GroupVersionResource]bool

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
type SharedInformerOption func(*metadataSharedInformerFactory) *metadataSharedInformerFactory

// WithTransform sets a transform on all informers, as client-go's
// metadatainformer.WithTransform does. It is generic.WithTransform: the
// transform runs on every object before it is stored, and a result that is
// not a non-nil *metav1.PartialObjectMetadata is reported and the object
// stored untransformed, where client-go would store it as it is.
func WithTransform(transform cache.TransformFunc) SharedInformerOption {
	return func(factory *metadataSharedInformerFactory) *metadataSharedInformerFactory {
		factory.transform = transform
		return factory
	}
}

// Factory is the generic core's factory of *metav1.PartialObjectMetadata
// informers; NewFactory makes one fed by a metadata client.
type Factory = generic.Factory[*metav1.PartialObjectMetadata]

// NewFactory returns a generic.Factory of *metav1.PartialObjectMetadata
// informers fed by client (through MetadataSource), with the namespace
// index, for code that wants the typed API rather than
// informers.GenericInformer. See generic.NewFactory for the Options and for
// what a nil client does.
func NewFactory(client metadata.Interface, opts ...generic.Option) *Factory {
	return generic.NewFactory[*metav1.PartialObjectMetadata](MetadataSource(client), nil, opts...)
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
	return &metadataSharedInformerFactory{factory: NewFactory(client,
		generic.WithDeferredStart(),
		generic.WithResyncPeriod(defaultResync),
		generic.WithNamespace(namespace),
		generic.WithTweakListOptions(tweakListOptions),
	)}
}

// NewSharedInformerFactoryWithOptions constructs a new instance of
// SharedInformerFactory for all namespaces with additional options, as
// client-go's metadatainformer.NewSharedInformerFactoryWithOptions does. Nil
// options are ignored.
func NewSharedInformerFactoryWithOptions(client metadata.Interface, defaultResync time.Duration, options ...SharedInformerOption) SharedInformerFactory {
	f := &metadataSharedInformerFactory{}
	for _, opt := range options {
		if opt == nil {
			continue
		}
		if next := opt(f); next != nil {
			f = next
		}
	}
	f.factory = NewFactory(client,
		generic.WithDeferredStart(),
		generic.WithResyncPeriod(defaultResync),
		generic.WithTransform(f.transform),
	)
	return f
}

// NewFilteredMetadataInformer constructs a new informer for a metadata type,
// as client-go's metadatainformer.NewFilteredMetadataInformer does. Its
// Informer() is not started: run it with Informer().Run or RunWithContext.
// Its Lister() is a shim over a generic.Lister of
// *metav1.PartialObjectMetadata.
func NewFilteredMetadataInformer(client metadata.Interface, gvr schema.GroupVersionResource, namespace string, resyncPeriod time.Duration, indexers cache.Indexers, tweakListOptions TweakListOptionsFunc) informers.GenericInformer {
	lw := MetadataSource(client)(gvr, namespace, tweakListOptions)
	informer := generic.NewInformer[*metav1.PartialObjectMetadata](lw, gvr, nil,
		generic.WithResyncPeriod(resyncPeriod),
		generic.WithIndexers(indexers),
	)
	return generic.NewGenericInformer(informer)
}

// Releaser is implemented by the factories NewSharedInformerFactory,
// NewFilteredSharedInformerFactory and NewSharedInformerFactoryWithOptions
// return: an extension of client-go's SharedInformerFactory, which cannot
// stop one informer without stopping them all. Release drops one hold on the
// informer of gvr (each ForResource call is one); when the last is dropped
// the informer stops, its goroutines end, and Release returns true; a later
// ForResource makes a fresh informer. It returns false for a gvr with no
// informer. It is generic.Factory.Release.
//
//	factory.(metadata.Releaser).Release(gvr)
//
// The *Factory of NewFactory has Release as a method, no assertion needed.
type Releaser interface {
	Release(gvr schema.GroupVersionResource) bool
}

// metadataSharedInformerFactory is client-go's SharedInformerFactory over a
// generic Factory. transform is WithTransform's, read once when the Factory
// is made.
type metadataSharedInformerFactory struct {
	factory   *Factory
	transform cache.TransformFunc
}

var (
	_ SharedInformerFactory = &metadataSharedInformerFactory{}
	_ Releaser              = &metadataSharedInformerFactory{}
)

func (f *metadataSharedInformerFactory) ForResource(gvr schema.GroupVersionResource) informers.GenericInformer {
	return generic.NewGenericInformer(f.factory.ForResource(gvr))
}

func (f *metadataSharedInformerFactory) Start(stopCh <-chan struct{}) {
	f.factory.Start(wait.ContextForChannel(stopCh))
}

// StartWithContext starts the informers not yet started until ctx ends, as
// the method of the same name of client-go's factory does.
func (f *metadataSharedInformerFactory) StartWithContext(ctx context.Context) {
	f.factory.Start(ctx)
}

// WaitForCacheSync checks the started informers at once and then every
// 100 ms, as client-go's factory does (cache.WaitForCacheSync), until each
// has synced or stopped, or stopCh is closed; the map says which synced.
//
// Unlike generic.Factory.WaitForCacheSync, which returns the moment the
// caches sync, it keeps client-go's timing, because code written against
// client-go relies on it: client-go's own tests, for one, change objects
// through the fake metadata client right after the wait, and the fake drops
// the events of changes made between an informer's list and its watch.
func (f *metadataSharedInformerFactory) WaitForCacheSync(stopCh <-chan struct{}) map[schema.GroupVersionResource]bool {
	_ = wait.PollUntilContextCancel(wait.ContextForChannel(stopCh), syncedPollPeriod, true,
		func(context.Context) (bool, error) { return f.allSyncedOrStopped(), nil })
	return f.syncedNow()
}

// syncedPollPeriod is client-go's (tools/cache syncedPollPeriod).
const syncedPollPeriod = 100 * time.Millisecond

// syncedNow reports, without waiting, whether each started informer has
// synced.
func (f *metadataSharedInformerFactory) syncedNow() map[schema.GroupVersionResource]bool {
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	return f.factory.WaitForCacheSync(ended)
}

func (f *metadataSharedInformerFactory) allSyncedOrStopped() bool {
	statuses := f.factory.Statuses()
	for gvr, synced := range f.syncedNow() {
		if !synced && statuses[gvr].State != generic.Stopped {
			return false
		}
	}
	return true
}

func (f *metadataSharedInformerFactory) Shutdown() { f.factory.Shutdown() }

func (f *metadataSharedInformerFactory) Release(gvr schema.GroupVersionResource) bool {
	return f.factory.Release(gvr)
}
