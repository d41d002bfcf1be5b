package unstructured

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apiunstructured "k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"github.com/generic-informers/generic"
)

// DynamicSharedInformerFactory provides access to a shared informer and
// lister for dynamic client: client-go's
// dynamicinformer.DynamicSharedInformerFactory.
type DynamicSharedInformerFactory interface {
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
// dynamicinformer.TweakListOptionsFunc.
type TweakListOptionsFunc = generic.TweakListOptionsFunc

// Factory is the generic core's factory of *unstructured.Unstructured
// informers; NewFactory makes one fed by a dynamic client.
type Factory = generic.Factory[*apiunstructured.Unstructured]

// NewFactory returns a generic.Factory of *unstructured.Unstructured
// informers fed by client, with the namespace index, for code that wants the
// typed API rather than informers.GenericInformer.
func NewFactory(client dynamic.Interface, opts ...generic.Option) *Factory {
	return generic.NewFactory[*apiunstructured.Unstructured](generic.DynamicSource(client), nil, opts...)
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
	return &dynamicSharedInformerFactory{factory: NewFactory(client,
		generic.WithDeferredStart(),
		generic.WithResyncPeriod(defaultResync),
		generic.WithNamespace(namespace),
		generic.WithTweakListOptions(tweakListOptions),
	)}
}

// NewFilteredDynamicInformer constructs a new informer for a dynamic type.
func NewFilteredDynamicInformer(client dynamic.Interface, gvr schema.GroupVersionResource, namespace string, resyncPeriod time.Duration, indexers cache.Indexers, tweakListOptions TweakListOptionsFunc) informers.GenericInformer {
	lw := generic.DynamicSource(client)(gvr, namespace, tweakListOptions)
	informer := generic.NewInformer[*apiunstructured.Unstructured](lw, gvr, nil,
		generic.WithResyncPeriod(resyncPeriod),
		generic.WithIndexers(indexers),
	)
	return generic.NewGenericInformer(informer)
}

// Releaser is implemented by the factories NewDynamicSharedInformerFactory
// and NewFilteredDynamicSharedInformerFactory return: an extension of
// client-go's DynamicSharedInformerFactory, which cannot stop one informer
// without stopping them all. Release drops one hold on the informer of gvr
// (each ForResource call is one); when the last is dropped the informer
// stops, its goroutines end, and Release returns true; a later ForResource
// makes a fresh informer. It returns false for a gvr with no informer.
//
//	factory.(unstructured.Releaser).Release(gvr)
//
// The *Factory of NewFactory has Release as a method, no assertion needed.
type Releaser interface {
	Release(gvr schema.GroupVersionResource) bool
}

var _ Releaser = &dynamicSharedInformerFactory{}

type dynamicSharedInformerFactory struct {
	factory *Factory
}

var _ DynamicSharedInformerFactory = &dynamicSharedInformerFactory{}

func (f *dynamicSharedInformerFactory) ForResource(gvr schema.GroupVersionResource) informers.GenericInformer {
	return generic.NewGenericInformer(f.factory.ForResource(gvr))
}

func (f *dynamicSharedInformerFactory) Start(stopCh <-chan struct{}) {
	f.factory.Start(wait.ContextForChannel(stopCh))
}

// WaitForCacheSync checks the started informers at once and then every
// 100 ms, as client-go's factory does (cache.WaitForCacheSync), until each
// has synced or stopped, or stopCh is closed; the map says which synced.
//
// Unlike generic.Factory.WaitForCacheSync, which returns the moment the
// caches sync, it keeps client-go's timing, because code written against
// client-go relies on it: client-go's own tests, for one, change objects
// through the fake dynamic client right after the wait, and the fake drops
// the events of changes made between an informer's list and its watch.
func (f *dynamicSharedInformerFactory) WaitForCacheSync(stopCh <-chan struct{}) map[schema.GroupVersionResource]bool {
	_ = wait.PollUntilContextCancel(wait.ContextForChannel(stopCh), syncedPollPeriod, true,
		func(context.Context) (bool, error) { return f.allSyncedOrStopped(), nil })
	return f.syncedNow()
}

// syncedPollPeriod is client-go's (tools/cache syncedPollPeriod).
const syncedPollPeriod = 100 * time.Millisecond

// syncedNow reports, without waiting, whether each started informer has
// synced.
func (f *dynamicSharedInformerFactory) syncedNow() map[schema.GroupVersionResource]bool {
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	return f.factory.WaitForCacheSync(ended)
}

func (f *dynamicSharedInformerFactory) allSyncedOrStopped() bool {
	statuses := f.factory.Statuses()
	for gvr, synced := range f.syncedNow() {
		if !synced && statuses[gvr].State != generic.Stopped {
			return false
		}
	}
	return true
}

func (f *dynamicSharedInformerFactory) Shutdown() { f.factory.Shutdown() }

func (f *dynamicSharedInformerFactory) Release(gvr schema.GroupVersionResource) bool {
	return f.factory.Release(gvr)
}
