package generic

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/resourceversion"
	"k8s.io/client-go/tools/cache"

	"github.com/generic-informers/generic/internal/cachewait"
)

// Read your writes
//
// An informer's cache lags the server: a controller that writes an object
// and then reads it from a Lister may see the state before its write.
// WaitForResourceVersion, WaitForWrite and WaitForDelete close that gap:
// they return once the informer's cache (its indexer, what Lister reads,
// not the reflector, which runs ahead of it) has applied every event of the
// informer's resource up to a resource version.
//
// How they know: client-go (v0.37, feature gate AtomicFIFO, on by default)
// records in the indexer the resource version of the last event it applied
// (an add, update or delete, a relist, or a watch bookmark), under the same
// lock as the change itself; the server sends a watch's events in
// resource-version order, so a cache at resource version N has applied
// every event up to N and none after. An event whose object did not
// convert moves it as a bookmark would (the object keeps its last good
// state, marked stale: Status.Stale), and so does one the shard filter
// leaves out; one of an object the informer never held, with no readable
// resource version, does not move it: the cache's resource version may
// lag, and a wait end later, never earlier. A wait for a write whose state
// did not convert (WaitForWrite) sees the cache at the write's resource
// version holding an older state of the object: it is an error naming
// the object as stale. Resource versions are compared with
// apimachinery's resourceversion.CompareResourceVersion: decimal integers
// without leading zeros, as kube-apiserver's are. Others (an aggregated API
// server may make its own) cannot be ordered and make the wait return a
// *ResourceVersionError at once, never a guess.
//
// How they wait: they read the cache's resource version (a read lock and a
// string comparison) at once, then 20 µs after the call and at intervals
// that grow by a quarter up to every 10 ms, until it is reached or ctx
// ends (internal/cachewait's Poll, which says why it polls and what was
// measured).

// ErrInformerStopped is wrapped by the error of a wait on an informer that
// has stopped (or stops during the wait) before its cache reached what was
// waited for: its cache will not change any more.
var ErrInformerStopped = errors.New("informer stopped")

// ErrStale is wrapped by the error of a WaitForWrite whose written state
// the informer could not take (it did not decode, convert or transform):
// the cache keeps the object's last good state, marked stale (see
// Status.Stale), and will not hold the written one. A WaitForWrite that
// starts once the informer has taken a later state of the object (a good
// one, or its delete), which the cache has yet to apply, waits for it and
// returns nil: the written state is then superseded, as with any write.
var ErrStale = errors.New("the cached object is stale")

// ErrResourceVersionNotTracked is wrapped by the error of every wait when
// client-go's feature gate AtomicFIFO is off (KUBE_FEATURE_AtomicFIFO=false):
// client-go's cache then does not record the resource version it has
// reached, and no wait could end but with its context.
var ErrResourceVersionNotTracked = errors.New("the cache does not track resource versions: client-go's feature gate AtomicFIFO is off")

// ResourceVersionError reports resource versions that cannot be ordered: one
// that is not a decimal integer without leading zeros, as kube-apiserver's
// are (an aggregated API server may make its own, or none). A wait that
// meets one returns it at once instead of guessing. Test for it with
// errors.As.
type ResourceVersionError struct {
	// GVR is the resource of the informer that waited.
	GVR schema.GroupVersionResource
	// Wanted is the resource version waited for.
	Wanted string
	// Cached is the resource version the informer's cache had reached, or
	// that of the cached object compared with Wanted; "" if none yet.
	Cached string
	// Err is apimachinery's resourceversion.InvalidResourceVersion, naming
	// the resource version that is not well formed.
	Err error
}

// Error names both resource versions, the resource and which one is not
// well formed.
func (e *ResourceVersionError) Error() string {
	return fmt.Sprintf("generic: cannot order resource version %q (waited for) and %q (cache of %s): %v; resource versions of this server are not comparable",
		e.Wanted, e.Cached, e.GVR, e.Err)
}

// Unwrap returns Err.
func (e *ResourceVersionError) Unwrap() error { return e.Err }

// WaitForResourceVersion: see Informer.
func (i *informer[T]) WaitForResourceVersion(ctx context.Context, resourceVersion string) error {
	return i.waitFor(ctx, fmt.Sprintf("resource version %q", resourceVersion), resourceVersion, true, nil)
}

// WaitForWrite: see Informer.
func (i *informer[T]) WaitForWrite(ctx context.Context, obj T) error {
	key, rv, err := i.written("WaitForWrite", obj)
	if err != nil {
		return err
	}
	what := fmt.Sprintf("%q at resource version %q", key, rv)
	if i.selection.excludes(obj, i.shard.selector(i.shardKey)) {
		// The server sends this informer no event of the object as
		// written, so nothing marks its cache's progress to rv: the wait
		// is over once the cache holds no older state of it (one the
		// write moved out of the selection leaves with a delete at rv).
		return i.waitFor(ctx, what, rv, false, func(string) (bool, error) {
			older, _, err := i.holdsOlder(key, rv)
			return !older && err == nil, err
		})
	}
	return i.waitFor(ctx, what, rv, true, func(cachedRV string) (bool, error) {
		older, objRV, err := i.holdsOlder(key, rv)
		if older {
			if stale, ok := i.chain.StaleOf(key); ok {
				return false, fmt.Errorf("generic: WaitForWrite of %s %q: the cache has applied every event up to resource version %q and holds the object at %q, its last good state: its state at %q did not decode, convert or transform (%w): %w",
					i.gvr, key, cachedRV, objRV, stale.ResourceVersion, stale.Err, ErrStale)
			}
			if handedRV, held := i.chain.HandedOn(key); !held || handedRV != objRV {
				// The ingest has handed on a later state of the object, or
				// its delete, which the cache has yet to apply (it lags
				// the ingest): the state held will not stay.
				return false, nil
			}
			return false, fmt.Errorf("generic: WaitForWrite of %s %q: the cache has applied every event up to resource version %q but holds the object at %q, older than %q: the object is not of this informer's resource",
				i.gvr, key, cachedRV, objRV, rv)
		}
		// Held at rv or later, or not held though every event up to rv
		// is applied: deleted since.
		return err == nil, err
	})
}

// holdsOlder reports whether the cache holds the object of key at a
// resource version older than rv, and at which.
func (i *informer[T]) holdsOlder(key, rv string) (older bool, objRV string, err error) {
	item, exists, err := i.shared.GetIndexer().GetByKey(key)
	if err != nil || !exists {
		return false, "", err
	}
	objRV, err = cachedObjectResourceVersion(item)
	if err != nil {
		return false, "", fmt.Errorf("generic: WaitForWrite of %s %q: the cached object: %w", i.gvr, key, err)
	}
	cmp, err := resourceversion.CompareResourceVersion(objRV, rv)
	if err != nil {
		return false, objRV, &ResourceVersionError{GVR: i.gvr, Wanted: rv, Cached: objRV, Err: err}
	}
	return cmp < 0, objRV, nil
}

// WaitForDelete: see Informer.
func (i *informer[T]) WaitForDelete(ctx context.Context, obj T) error {
	key, rv, err := i.written("WaitForDelete", obj)
	if err != nil {
		return err
	}
	uid := obj.GetUID()
	return i.waitFor(ctx, fmt.Sprintf("the delete of %q (after resource version %q)", key, rv), rv, true, func(string) (bool, error) {
		item, exists, err := i.shared.GetIndexer().GetByKey(key)
		if err != nil || !exists {
			return err == nil, err
		}
		if uid == "" {
			return false, nil
		}
		m, err := meta.Accessor(item)
		if err != nil {
			return false, fmt.Errorf("generic: WaitForDelete of %s %q: the cached object: %w", i.gvr, key, err)
		}
		return m.GetUID() != uid, nil // another object of the same name
	})
}

// written returns the cache key and resource version of the object a wait
// was given, or an error saying what is missing.
func (i *informer[T]) written(method string, obj T) (key, rv string, err error) {
	if isNilPointer(obj) || any(obj) == nil {
		return "", "", fmt.Errorf("generic: %s of %s: nil object", method, i.gvr)
	}
	if obj.GetName() == "" {
		return "", "", fmt.Errorf("generic: %s of %s: the object has no name", method, i.gvr)
	}
	key, err = cache.MetaNamespaceKeyFunc(obj)
	if err != nil {
		return "", "", fmt.Errorf("generic: %s of %s: %w", method, i.gvr, err)
	}
	rv = obj.GetResourceVersion()
	if rv == "" {
		return "", "", fmt.Errorf("generic: %s of %s %q: the object has no resourceVersion; pass the object a write returned, or one read from the server", method, i.gvr, key)
	}
	return key, rv, nil
}

// waitFor waits until the cache has reached resource version rv (if
// reach; else rv is only checked to be well formed) and then held reports
// true (nil held: at once), until ctx ends or the informer stops. what
// describes the wait for errors.
func (i *informer[T]) waitFor(ctx context.Context, what, rv string, reach bool, held func(cachedRV string) (bool, error)) error {
	if ctx == nil {
		return fmt.Errorf("generic: wait for %s of %s: nil context", what, i.gvr)
	}
	if _, err := resourceversion.CompareResourceVersion(rv, rv); err != nil {
		return &ResourceVersionError{GVR: i.gvr, Wanted: rv, Cached: i.cachedResourceVersion(), Err: err}
	}
	if !cachewait.Tracked() {
		return fmt.Errorf("generic: wait for %s of %s: %w", what, i.gvr, ErrResourceVersionNotTracked)
	}
	var cached string
	err := cachewait.Poll(ctx, i.machine.stoppedChan(), func() (bool, error) {
		cached = i.cachedResourceVersion()
		if reach {
			reached, err := cachewait.Reached(cached, rv)
			if err != nil {
				return false, &ResourceVersionError{GVR: i.gvr, Wanted: rv, Cached: cached, Err: err}
			}
			if !reached || held == nil {
				return reached, nil
			}
		}
		return held(cached)
	})
	switch {
	case errors.Is(err, cachewait.ErrStopped):
		return fmt.Errorf("generic: wait for %s of %s: the cache is at resource version %q: %w", what, i.gvr, cached, ErrInformerStopped)
	case err != nil && ctx.Err() != nil && errors.Is(err, ctx.Err()):
		return fmt.Errorf("generic: wait for %s of %s: the cache is at resource version %q (%s): %w",
			what, i.gvr, cached, i.Status().State, err)
	}
	return err
}

// cachedResourceVersion is the resource version of the last event the
// cache applied, "" if none yet.
func (i *informer[T]) cachedResourceVersion() string {
	return i.shared.GetIndexer().LastStoreSyncResourceVersion()
}

func cachedObjectResourceVersion(obj any) (string, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return "", err
	}
	return m.GetResourceVersion(), nil
}
