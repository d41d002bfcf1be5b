// Package cachewait waits until an informer's cache (its indexer, what a
// Lister reads) has reached something: a resource version (read your
// writes), or a whole list (a reshard). One poll loop serves both.
//
// client-go (v0.37, feature gate AtomicFIFO, on by default) records in the
// indexer the resource version of the last event it applied (an add,
// update or delete, a relist, or a watch bookmark), under the same lock as
// the change itself. It offers no notification of what reaches the
// indexer (bookmarks included) short of an event handler, which would cost
// every informer a listener and is called after the indexer is updated
// anyway; so the waits poll it (see Poll).
//
// It imports nothing of this module.
package cachewait

import (
	"context"
	"errors"
	"math"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/resourceversion"
	"k8s.io/apimachinery/pkg/util/wait"
	clientfeatures "k8s.io/client-go/features"
	"k8s.io/client-go/tools/cache"
)

// ErrStopped is returned by Poll when stopped was closed before check was
// met.
var ErrStopped = errors.New("stopped")

// Tracked reports whether client-go's cache records the resource version
// it has reached: the feature gate AtomicFIFO is on. Without it no wait
// could end but with its context.
func Tracked() bool { return clientfeatures.FeatureGates().Enabled(clientfeatures.AtomicFIFO) }

// Polling intervals: the first check after the one made at once, and the
// most the interval grows to, by a quarter at every check: about 20
// checks in the first 10 ms, then 100 a second. Measured on the embedded
// kube-apiserver (e2e/bench BenchmarkWaitForWrite, 2 cores), from an
// update's response to the wait's return: p50 26 µs and p99 1.2 ms; with
// the first check at 1 ms instead, p50 was 1.2 ms: the watch event mostly
// reaches the cache within tens of microseconds of the write's response.
const (
	firstPoll = 20 * time.Microsecond
	maxPoll   = 10 * time.Millisecond
)

func backoff() wait.Backoff {
	return wait.Backoff{Duration: firstPoll, Factor: 1.25, Steps: math.MaxInt32, Cap: maxPoll}
}

// Poll calls check at once, then at the intervals of backoff, until it
// reports done (Poll returns nil) or an error (returned as it is), until
// stopped is closed (checked once more, then ErrStopped), or until ctx
// ends (ctx.Err()). check reads a cache: a read lock and a comparison.
func Poll(ctx context.Context, stopped <-chan struct{}, check func() (done bool, err error)) error {
	intervals := backoff()
	var timer *time.Timer
	for {
		done, err := check()
		if err != nil || done {
			return err
		}
		select {
		case <-stopped:
			return ErrStopped
		default:
		}
		if timer == nil {
			timer = time.NewTimer(intervals.Step())
			defer timer.Stop()
		} else {
			timer.Reset(intervals.Step())
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-stopped:
			// Look once more: the last events may have reached the cache.
		case <-timer.C:
		}
	}
}

// Reached reports whether a cache at resource version cached has applied
// every event up to rv. "" and "0" (nothing applied yet; a resource never
// listed, served empty) have not. Resource versions are compared with
// apimachinery's resourceversion.CompareResourceVersion (decimal integers
// without leading zeros, as kube-apiserver's are); its error is returned
// for one that is not well formed.
func Reached(cached, rv string) (bool, error) {
	if cached == "" || cached == "0" {
		return false, nil
	}
	order, err := resourceversion.CompareResourceVersion(cached, rv)
	return err == nil && order >= 0, err
}

// Selector is the shard selection of a list (apimachinery's
// sharding.Selector): nil selects every object.
type Selector interface {
	Matches(obj runtime.Object) (bool, error)
}

// HoldsList reports whether indexer has applied a list made at resource
// version rv of the objects keys with selector. A cache at a later
// resourceVersion has: the reflector queues a list's Replace before the
// events that follow it. At the list's own resourceVersion (a quiet
// resource relisted), the cache before the Replace may be at it too; then
// the cache must hold every listed object and nothing outside the list's
// selection; so too when either resourceVersion is "0".
func HoldsList(indexer cache.Indexer, rv string, keys []string, selector Selector) (bool, error) {
	cached := indexer.LastStoreSyncResourceVersion()
	if cached == "" {
		return false, nil
	}
	// "0" (a list of nothing ever written) orders against nothing: the
	// contents decide.
	if cached != "0" && rv != "0" {
		order, err := resourceversion.CompareResourceVersion(cached, rv)
		if err != nil || order != 0 {
			return order > 0, err
		}
	}
	for _, key := range keys {
		if _, exists, err := indexer.GetByKey(key); err != nil || !exists {
			return false, err
		}
	}
	if selector == nil {
		return true, nil
	}
	for _, obj := range indexer.List() {
		o, ok := obj.(runtime.Object)
		if !ok {
			continue
		}
		if in, err := selector.Matches(o); err != nil || !in {
			return false, err
		}
	}
	return true, nil
}
