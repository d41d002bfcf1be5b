package telemetry

import "context"

// Counter counts: Inc adds one. It is safe for concurrent use.
type Counter interface{ Inc() }

// Histogram records observations, in seconds for latencies. It is safe
// for concurrent use.
type Histogram interface{ Observe(float64) }

// Kinds of event, the indexes of Metrics.Events.
const (
	EventAdd = iota
	EventUpdate
	EventDelete
	EventTombstone
)

// Kinds of request, the indexes of Metrics.Requests.
const (
	RequestList = iota
	RequestWatch
)

// Metrics are the metrics of one Run of an informer, resolved by the root
// package from its MetricsProvider: no field is nil.
type Metrics struct {
	// Events counts the events delivered, by kind (EventAdd, ...).
	Events [4]Counter
	// Requests counts the requests sent, by kind (RequestList, ...).
	Requests [2]Counter
	// Rejected counts the objects the ingest rejected.
	Rejected Counter
	// DroppedErrors counts the error reports dropped because too many were
	// waiting for the ErrorHandler.
	DroppedErrors Counter
	// Relists counts the complete lists after the first.
	Relists Counter
	// Latency observes delivery latencies, in seconds.
	Latency Histogram
	// Failed counts a failed request of a kind.
	Failed func(request int, err error)
	// Delete is called once, when the Run has returned.
	Delete func()
}

// Request counts a request sent to the server (RequestList or
// RequestWatch).
func (t *Telemetry) Request(watch bool) {
	if m := t.metrics.Load(); m != nil {
		m.Requests[requestKind(watch)].Inc()
	}
}

// RequestFailed counts a failed request, unless ctx ended (the informer
// stopping cancels its requests).
func (t *Telemetry) RequestFailed(ctx context.Context, watch bool, err error) {
	if m := t.metrics.Load(); m != nil && ctx.Err() == nil {
		m.Failed(requestKind(watch), err)
	}
}

func requestKind(watch bool) int {
	if watch {
		return RequestWatch
	}
	return RequestList
}

// Events counts the events delivered, by kind.
func (t *Telemetry) Events(added, updated, deleted, tombstoned int) {
	m := t.metrics.Load()
	if m == nil {
		return
	}
	for kind, n := range [4]int{added, updated, deleted, tombstoned} {
		for range n {
			m.Events[kind].Inc()
		}
	}
}

// Rejected counts an object the ingest rejected.
func (t *Telemetry) Rejected() {
	if m := t.metrics.Load(); m != nil {
		m.Rejected.Inc()
	}
}

// DroppedError counts an error report that was dropped.
func (t *Telemetry) DroppedError() {
	if m := t.metrics.Load(); m != nil {
		m.DroppedErrors.Inc()
	}
}

// CountsEvents reports whether events are counted (there are metrics), so
// that what only they need (comparing a relist with the objects held) can
// be skipped.
func (t *Telemetry) CountsEvents() bool { return t.metrics.Load() != nil }

// CompleteList records a complete list (or WatchList stream): the first
// ends the initial sync's count of objects received, the others are
// relists.
func (t *Telemetry) CompleteList() {
	if t.completeLists.Add(1) == 1 {
		t.progress.listed()
		return
	}
	if m := t.metrics.Load(); m != nil {
		m.Relists.Inc()
	}
}

// observeLatency records a delivery latency.
func (t *Telemetry) observeLatency(seconds float64) {
	if m := t.metrics.Load(); m != nil {
		m.Latency.Observe(seconds)
	}
}
