package ctrlcache

import (
	"time"

	toolscache "k8s.io/client-go/tools/cache"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"

	"github.com/generic-informers/generic"
)

// informer is controller-runtime's cache.Informer over one Handle of the
// Registry. Handlers get the view's objects (typed, unstructured or
// metadata-only); index functions too, even on a compact store, whose
// indexer holds encoded records.
//
// What a method takes from the shared informer (HasSyncedChecker,
// IsStopped, RemoveEventHandler) is that of the informer that holds the
// Handle when called, as generic.Handle says: a Handle kept across a
// restart reads the fresh informer.
type informer struct {
	v view
	// progress feeds controller-runtime's consistency handler, if one is
	// added, the store's resourceVersion (progress.go).
	progress *progress
}

var _ crcache.Informer = informer{}

// AddEventHandler adds handler with the informer's resync period.
func (i informer) AddEventHandler(handler toolscache.ResourceEventHandler) (toolscache.ResourceEventHandlerRegistration, error) {
	return i.addEventHandler(handler, toolscache.HandlerOptions{})
}

// AddEventHandlerWithResyncPeriod adds handler, resynced every resyncPeriod
// (as client-go: not more often than the informer's own resync check).
func (i informer) AddEventHandlerWithResyncPeriod(handler toolscache.ResourceEventHandler, resyncPeriod time.Duration) (toolscache.ResourceEventHandlerRegistration, error) {
	return i.addEventHandler(handler, toolscache.HandlerOptions{ResyncPeriod: &resyncPeriod})
}

// AddEventHandlerWithOptions adds handler with client-go's HandlerOptions.
func (i informer) AddEventHandlerWithOptions(handler toolscache.ResourceEventHandler, options toolscache.HandlerOptions) (toolscache.ResourceEventHandlerRegistration, error) {
	return i.addEventHandler(handler, options)
}

// addEventHandler adds handler; controller-runtime's consistency handler
// is also told of the store's resourceVersion as it moves (progress.go).
func (i informer) addEventHandler(handler toolscache.ResourceEventHandler, options toolscache.HandlerOptions) (toolscache.ResourceEventHandlerRegistration, error) {
	registration, err := i.v.addEventHandler(handler, options)
	if err != nil || i.progress == nil || !isConsistencyHandler(handler) {
		return registration, err
	}
	return i.progress.add(&progressRegistration{
		ResourceEventHandlerRegistration: registration,
		progress:                         i.progress,
		handler:                          handler,
		applied:                          func() string { return oldestApplied([]func() string{i.applied}) },
		gone:                             i.gone,
	}), nil
}

// RemoveEventHandler removes a handler added to this informer.
func (i informer) RemoveEventHandler(registration toolscache.ResourceEventHandlerRegistration) error {
	return i.v.handle().Informer().RemoveEventHandler(unfed(registration))
}

// applied is the resourceVersion the informer's store has applied: that
// of the last add, update, delete, relist or bookmark; "" if none yet, or
// if the informer has no store (a custom NewInformer's may not).
func (i informer) applied() string {
	shared := i.v.handle().Informer()
	if shared == nil {
		return ""
	}
	store := shared.GetIndexer()
	if store == nil {
		return ""
	}
	return store.LastStoreSyncResourceVersion()
}

// gone reports whether the informer is released for good.
func (i informer) gone() bool {
	select {
	case <-i.v.handle().Done():
		return true
	default:
		return false
	}
}

// AddIndexers adds index functions, as generic.Informer.AddIndexers does:
// kept for the informers that replace this one.
func (i informer) AddIndexers(indexers toolscache.Indexers) error {
	return i.v.addIndexers(indexers)
}

// HasSynced reports whether the cache has been filled by a complete list.
func (i informer) HasSynced() bool { return i.v.handle().HasSynced() }

// HasSyncedChecker is the shared informer's.
func (i informer) HasSyncedChecker() toolscache.DoneChecker {
	return i.v.handle().Informer().HasSyncedChecker()
}

// IsStopped reports whether the informer has stopped: its Start context
// ended, RemoveInformer released it, or it stopped for good.
func (i informer) IsStopped() bool {
	return i.v.handle().Status().State == generic.Stopped || i.v.handle().Informer().IsStopped()
}
