package telemetry

import (
	"context"
	"sync/atomic"
	"time"
)

// Config is what a Telemetry is made with.
type Config struct {
	// Name names the informer in log lines (its GroupVersionResource).
	Name string
	// Measured: the informer has a metrics provider, so watch events are
	// stamped for the delivery latency.
	Measured bool
	// TimedEvery is the least time between two timed watch events (see
	// Clock).
	TimedEvery time.Duration
	// LogVerbosity and LogInterval are those of the initial sync's
	// progress lines (see Progress).
	LogVerbosity int
	LogInterval  time.Duration
}

// Telemetry is what one informer measures of itself. Its methods are safe
// for concurrent use.
type Telemetry struct {
	progress syncProgress
	// clock stamps watch events for the delivery latency; nil without
	// metrics.
	clock *Clock
	// metrics are the provider's metrics from Start to Stop; nil before,
	// after and without a provider.
	metrics atomic.Pointer[Metrics]
	// completeLists counts the complete lists (and WatchList streams):
	// the first is the initial sync, the others relists.
	completeLists atomic.Int64
}

// New returns the Telemetry of one informer.
func New(c Config) *Telemetry {
	t := &Telemetry{progress: syncProgress{name: c.Name, verbosity: c.LogVerbosity, interval: c.LogInterval}}
	if c.Measured {
		t.clock = newClock(t, c.TimedEvery)
	}
	return t
}

// Start begins the initial sync's clock and, with m not nil, the metrics
// of a Run.
func (t *Telemetry) Start(m *Metrics) {
	t.progress.start(time.Now())
	if m != nil {
		t.metrics.Store(m)
	}
}

// Stop deletes the metrics of the Run that has returned.
func (t *Telemetry) Stop() {
	if m := t.metrics.Swap(nil); m != nil {
		m.Delete()
	}
}

// Clock returns the delivery clock, nil without metrics.
func (t *Telemetry) Clock() *Clock { return t.clock }

// Received counts n objects of the initial list, and logs the progress if
// the last line is old enough.
func (t *Telemetry) Received(ctx context.Context, n int) { t.progress.receive(ctx, n) }

// ReceivingInitialList reports whether the initial list is still being
// received, so that its objects are to be counted.
func (t *Telemetry) ReceivingInitialList() bool { return !t.progress.listDone.Load() }

// Filled records when the cache was first filled, and logs it.
func (t *Telemetry) Filled(ctx context.Context, now time.Time) { t.progress.filledAt(ctx, now) }

// Progress is the initial sync's progress; filled says whether the cache
// is filled (it may be a moment before Filled hears of it).
func (t *Telemetry) Progress(filled bool) Progress { return t.progress.snapshot(filled) }

// Arrival is the time a watch event arrives, if it is to be timed, else 0
// (also without metrics). Only the goroutine of the informer's current
// watch calls it.
func (t *Telemetry) Arrival() time.Duration {
	if t.clock == nil {
		return 0
	}
	return t.clock.arrival()
}

// Stamp records that obj, handed on by the ingest, arrived at arrived (0:
// not timed). Only the goroutine of the informer's current watch calls it.
func (t *Telemetry) Stamp(obj any, arrived time.Duration) {
	if t.clock != nil {
		t.clock.stamp(obj, arrived)
	}
}
