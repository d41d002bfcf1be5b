// Package telemetry is what an informer measures of itself: its initial
// sync's progress, always, and, when it has a metrics provider, counts of
// requests, events, rejected objects and relists, and the delivery
// latency of watch events (clock.go).
//
// The list/watch chain (internal/listwatch) and the root package's
// handlers feed a *Telemetry; its methods are safe for concurrent use and
// cost an atomic load when there are no metrics. It knows nothing of the
// root package's MetricsProvider: the root resolves a provider's metrics
// into Metrics, counters and histograms of this package's own small
// interfaces, and maps errors to failure reasons itself.
//
// It imports nothing of this module.
package telemetry
