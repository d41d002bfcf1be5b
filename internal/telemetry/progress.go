package telemetry

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/klog/v2"
)

// Progress is how far an informer's initial sync has come (the root
// package's SyncProgress documents the fields).
type Progress struct {
	Received int64
	Started  time.Time
	Elapsed  time.Duration
	Rate     float64
	Done     bool
}

// syncProgress counts an informer's initial sync. received is counted on
// the list and watch goroutines, read from any goroutine.
type syncProgress struct {
	// name names the informer in the log lines.
	name      string
	verbosity int
	interval  time.Duration
	received  atomic.Int64
	// listDone is set at the end of the first complete list.
	listDone atomic.Bool

	mu      sync.Mutex
	started time.Time
	filled  time.Time
	lastLog time.Time
}

func (p *syncProgress) start(now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.started = now
	p.lastLog = now
}

// receive counts n objects of the initial list, and logs the progress if
// the last line is interval old.
func (p *syncProgress) receive(ctx context.Context, n int) {
	if n <= 0 || p.listDone.Load() {
		return
	}
	received := p.received.Add(int64(n))
	logger := klog.FromContext(ctx).V(p.verbosity)
	if !logger.Enabled() {
		return
	}
	now := time.Now()
	p.mu.Lock()
	if now.Sub(p.lastLog) < p.interval || p.started.IsZero() {
		p.mu.Unlock()
		return
	}
	p.lastLog = now
	elapsed := now.Sub(p.started)
	p.mu.Unlock()
	logger.Info("Initial sync in progress", "gvr", p.name, "received", received, "elapsed", elapsed.Round(time.Millisecond), "perSecond", int64(rate(received, elapsed)))
}

// listed ends the count of objects received.
func (p *syncProgress) listed() { p.listDone.Store(true) }

// filledAt records when the cache was first filled, and logs it.
func (p *syncProgress) filledAt(ctx context.Context, now time.Time) {
	p.mu.Lock()
	if !p.filled.IsZero() {
		p.mu.Unlock()
		return
	}
	p.filled = now
	elapsed := now.Sub(p.started)
	p.mu.Unlock()
	received := p.received.Load()
	klog.FromContext(ctx).V(p.verbosity).Info("Initial sync done", "gvr", p.name, "received", received,
		"elapsed", elapsed.Round(time.Millisecond), "perSecond", int64(rate(received, elapsed)))
}

// snapshot is the progress now; filled says whether the cache is filled.
func (p *syncProgress) snapshot(filled bool) Progress {
	p.mu.Lock()
	started, end := p.started, p.filled
	p.mu.Unlock()
	s := Progress{Received: p.received.Load(), Started: started, Done: filled || !end.IsZero()}
	if started.IsZero() {
		return s
	}
	if end.IsZero() {
		end = time.Now()
	}
	s.Elapsed = end.Sub(started)
	s.Rate = rate(s.Received, s.Elapsed)
	return s
}

func rate(n int64, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(n) / d.Seconds()
}
