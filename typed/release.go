package typed

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/generic-informers/generic"
)

// Release drops one hold on the informer InformerFor[T] (with the same
// options) returned, as generic.Factory.Release does: when the last hold is
// dropped the informer stops, its goroutines end, and Release returns true;
// a later InformerFor makes a fresh one. It returns false, and changes
// nothing, if there is no such informer. The resource is the one recorded
// when the informer was handed out: Release never asks the RESTMapper,
// which may have forgotten the kind (its CRD deleted). Prefer the Handle's
// own Release, which drops exactly its hold.
func Release[T generic.Object](factory *Factory, opts ...InformerOption) bool {
	if factory == nil {
		return false
	}
	gvk, err := kindOf[T](factory.scheme)
	if err != nil {
		return false
	}
	return factory.release(factoryKey{goType: reflect.TypeFor[T]()}, gvk, opts)
}

// ReleaseKind is Release for an informer InformerForKind returned.
func ReleaseKind(factory *Factory, gvk schema.GroupVersionKind, opts ...InformerOption) bool {
	if factory == nil {
		return false
	}
	return factory.release(factoryKey{goType: reflect.TypeFor[Object](), gvk: gvk}, gvk, opts)
}

// releaser is what release needs of a generic.Factory[T], whatever T.
type releaser interface {
	Release(gvr schema.GroupVersionResource) bool
}

func (f *Factory) release(key factoryKey, gvk schema.GroupVersionKind, opts []InformerOption) bool {
	f.mu.Lock()
	l, ok := f.byType[key]
	gvr, recorded := f.resources[key]
	f.mu.Unlock()
	if explicit := resolveInformerOptions(opts).mapping; explicit != nil {
		gvr, recorded = explicit.Resource, true
	}
	if !ok || !recorded {
		return false
	}
	r, ok := l.(releaser)
	return ok && r.Release(gvr)
}

// Statuses reports the Status of every informer of the factory, keyed by
// resource. A resource with several informers (typed, unstructured and
// metadata-only ones, or several selections) reports one that is not
// Synced, if any, so that a problem is never hidden behind a synced twin.
func (f *Factory) Statuses() map[schema.GroupVersionResource]generic.Status {
	statuses := map[schema.GroupVersionResource]generic.Status{}
	for _, l := range f.lifecycles() {
		for gvr, status := range l.Statuses() {
			if seen, ok := statuses[gvr]; !ok || seen.State == generic.Synced {
				statuses[gvr] = status
			}
		}
	}
	return statuses
}

// WaitForCacheSyncError waits until every started informer has synced or
// ctx ends; it returns nil, or a *generic.SyncError naming each resource
// that did not sync and why (see generic.Factory.WaitForCacheSyncError).
func (f *Factory) WaitForCacheSyncError(ctx context.Context) error {
	var unsynced []generic.Status
	var ctxErr error
	for _, l := range f.lifecycles() {
		var syncErr *generic.SyncError
		if err := l.WaitForCacheSyncError(ctx); errors.As(err, &syncErr) {
			unsynced = append(unsynced, syncErr.Unsynced...)
			ctxErr = syncErr.Err
		}
	}
	if len(unsynced) == 0 {
		return nil
	}
	slices.SortFunc(unsynced, func(a, b generic.Status) int { return strings.Compare(a.GVR.String(), b.GVR.String()) })
	return &generic.SyncError{Unsynced: unsynced, Err: ctxErr}
}
