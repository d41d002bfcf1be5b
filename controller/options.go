package controller

import (
	"fmt"
	"time"

	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/generic-informers/generic"
)

// Option configures a Controller: the secondary objects it watches
// (Watches, Owns) and how it runs.
type Option func(*options) error

type options struct {
	sources            []source
	workers            int
	rateLimiter        workqueue.TypedRateLimiter[cache.ObjectName]
	metrics            workqueue.MetricsProvider
	errorHandler       generic.ErrorHandler
	consistencyTimeout time.Duration
}

// DefaultConsistencyTimeout is how long a reconcile waits, by default, for
// the caches to catch up with its key's previous writes before the key is
// requeued instead.
const DefaultConsistencyTimeout = 5 * time.Second

func defaultOptions() options {
	return options{
		workers:            1,
		rateLimiter:        workqueue.DefaultTypedControllerRateLimiter[cache.ObjectName](),
		consistencyTimeout: DefaultConsistencyTimeout,
	}
}

// WithWorkers sets how many keys are reconciled at once (default 1); at
// least 1. A key is never reconciled by two workers at once.
func WithWorkers(n int) Option {
	return func(o *options) error {
		if n < 1 {
			return fmt.Errorf("controller: %d workers; at least 1", n)
		}
		o.workers = n
		return nil
	}
}

// WithRateLimiter sets how long a key waits before it is retried after an
// error, a consistency delay or a Result with the deprecated Requeue (default: client-go's
// workqueue.DefaultTypedControllerRateLimiter, 5 ms doubling to 1000 s per
// key, and 10 a second with bursts of 100 overall).
func WithRateLimiter(limiter workqueue.TypedRateLimiter[cache.ObjectName]) Option {
	return func(o *options) error {
		if limiter == nil {
			return fmt.Errorf("controller: nil rate limiter")
		}
		o.rateLimiter = limiter
		return nil
	}
}

// WithQueueMetrics makes the controller's workqueue report through provider
// (client-go's workqueue.MetricsProvider; package prometheus's Metrics is
// one), under the controller's name. A provider that is also a
// ConsistencyMetricsProvider counts the controller's consistency delays,
// by resource.
func WithQueueMetrics(provider workqueue.MetricsProvider) Option {
	return func(o *options) error {
		o.metrics = provider
		return nil
	}
}

// WithReconcileErrorHandler sets what is told of each failed reconcile (its error,
// or its recovered panic), of each key requeued because the caches did
// not catch up with its writes in time (a *ConsistencyDelayError), and of
// each write not waited for because an informer stopped. Default:
// client-go's utilruntime.HandleErrorWithContext, which logs. It is called
// from the workers, and must not block long.
func WithReconcileErrorHandler(handler generic.ErrorHandler) Option {
	return func(o *options) error {
		o.errorHandler = handler
		return nil
	}
}

// WithConsistencyTimeout sets how long a reconcile waits for the caches to
// catch up with its key's previous writes (default
// DefaultConsistencyTimeout). Past it, the key is not reconciled: it is
// requeued with the rate limiter's backoff, reported (a
// *ConsistencyDelayError to the ErrorHandler) and counted
// (ConsistencyMetricsProvider), and its writes stay pending, however many
// times in a row that happens: a controller never reconciles a key from a
// cache older than the key's own last write. A write stops being waited
// for only when every informer of its resource the controller watches
// has it, or cannot show it: the object is outside the informer's
// selection (namespace, labels, a field selector on metadata.name or
// metadata.namespace) or shard, the object was deleted or a newer state
// of it is cached, or the informer has stopped (reported). An informer
// whose field selector names other fields, which no wait can judge a
// write against, is waited for only until it holds no older state of the
// object (see the package documentation). It must be positive.
func WithConsistencyTimeout(d time.Duration) Option {
	return func(o *options) error {
		if d <= 0 {
			return fmt.Errorf("controller: consistency timeout %v; it must be positive", d)
		}
		o.consistencyTimeout = d
		return nil
	}
}
