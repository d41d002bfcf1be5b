package controller

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

// ConsistencyDelayError is what the ErrorHandler (WithReconcileErrorHandler) is told
// of each time a key is requeued with the rate limiter's backoff instead of
// reconciled, because an informer the controller watches has not caught up
// with a write of the key's earlier reconciles: its cache, which the
// reconcile would read, is older than the key's own last write. The write
// stays pending; the key is reconciled once the caches have it (or it is
// known they never will show it). Test for it with errors.As, to tell a
// lagging cache from a failed reconcile.
type ConsistencyDelayError struct {
	// Controller is the controller's name.
	Controller string
	// Key is the key delayed.
	Key cache.ObjectName
	// Resource is the resource of the informer that has not caught up.
	Resource schema.GroupVersionResource
	// Namespace and Name name the object written.
	Namespace, Name string
	// ResourceVersion is the write's ("" for a delete, whose answer
	// client-go drops).
	ResourceVersion string
	// Deleted is true for a delete.
	Deleted bool
	// Err is why the wait ended without the write: an error wrapping
	// context.DeadlineExceeded after WithConsistencyTimeout (naming the
	// cache's resource version and its informer's State), a
	// *generic.ResourceVersionError for resource versions that cannot be
	// ordered, one wrapping generic.ErrResourceVersionNotTracked when
	// client-go's feature gate AtomicFIFO is off.
	Err error
}

// Error names the controller, the key, the write and the informer.
func (e *ConsistencyDelayError) Error() string {
	return fmt.Sprintf("controller %s: key %s %s", e.Controller, e.Key, e.cause())
}

// cause is the error without the controller and the key: "delayed: the
// cache of ... has not caught up with ...: why".
func (e *ConsistencyDelayError) cause() string {
	what := fmt.Sprintf("the write of %s at resource version %q", objectName(e.Namespace, e.Name), e.ResourceVersion)
	if e.Deleted {
		what = "the delete of " + objectName(e.Namespace, e.Name)
	}
	return fmt.Sprintf("delayed: the cache of %s has not caught up with %s: %v", e.Resource, what, e.Err)
}

// Unwrap returns Err.
func (e *ConsistencyDelayError) Unwrap() error { return e.Err }

func objectName(namespace, name string) string {
	return cache.ObjectName{Namespace: namespace, Name: name}.String()
}

// ConsistencyMetricsProvider is a workqueue.MetricsProvider that also
// counts consistency delays. A controller given one with WithQueueMetrics
// calls NewConsistencyDelaysMetric when Run starts, once for each resource
// it watches, and increments the metric each time a key is requeued
// because that resource's informer has not caught up with the key's own
// writes (each ConsistencyDelayError reported). A nil metric counts
// nothing. Its Prometheus name is generic_controller_consistency_delays_total,
// labelled controller, group, version and resource (docs/metrics.md).
type ConsistencyMetricsProvider interface {
	workqueue.MetricsProvider
	NewConsistencyDelaysMetric(controller string, resource schema.GroupVersionResource) workqueue.CounterMetric
}

// delayMetrics are a controller's consistency delay counters, by resource;
// nil without a ConsistencyMetricsProvider. Made when Run starts, read only
// after.
type delayMetrics map[schema.GroupVersionResource]workqueue.CounterMetric

func newDelayMetrics(name string, provider workqueue.MetricsProvider, sources []source) delayMetrics {
	p, ok := provider.(ConsistencyMetricsProvider)
	if !ok {
		return nil
	}
	m := delayMetrics{}
	for _, src := range sources {
		if _, made := m[src.gvr]; !made {
			m[src.gvr] = p.NewConsistencyDelaysMetric(name, src.gvr)
		}
	}
	return m
}

// delayed counts a consistency delay on resource's informer.
func (m delayMetrics) delayed(resource schema.GroupVersionResource) {
	if counter := m[resource]; counter != nil {
		counter.Inc()
	}
}
