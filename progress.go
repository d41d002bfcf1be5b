package generic

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/klog/v2"
)

// SyncProgress is how far an informer's initial sync has come: the
// objects received from the server so far, and how fast. Status has it;
// the informer also logs it, through the klog logger of the context it
// runs with, at verbosity 2 (ProgressLogVerbosity): at most once every
// ProgressLogInterval while objects come in, and once when the cache is
// filled.
type SyncProgress struct {
	// Received counts the objects the server sent in the initial list
	// (every page, those the ingest then rejected or filtered out
	// included), or in the initial events of a WatchList stream. It stops
	// at the end of that list or stream; zero before Run.
	Received int64
	// Started is when Run started the informer; zero before.
	Started time.Time
	// Elapsed is the time from Started until now, or, once Done, until
	// the cache was filled.
	Elapsed time.Duration
	// Rate is Received per second of Elapsed (0 when Elapsed is 0).
	Rate float64
	// Done: the cache has been filled (HasSynced).
	Done bool
}

const (
	// ProgressLogVerbosity is the klog verbosity of the initial sync's
	// progress lines.
	ProgressLogVerbosity = 2
	// ProgressLogInterval is the least time between two progress lines of
	// one informer.
	ProgressLogInterval = 2 * time.Second
)

// syncProgress counts an informer's initial sync. Received is counted on
// the list and watch goroutines, read by Status from any goroutine.
type syncProgress struct {
	// gvr names the informer in the log lines.
	gvr      string
	received atomic.Int64
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
// the last line is ProgressLogInterval old.
func (p *syncProgress) receive(ctx context.Context, n int) {
	if n <= 0 || p.listDone.Load() {
		return
	}
	received := p.received.Add(int64(n))
	logger := klog.FromContext(ctx).V(ProgressLogVerbosity)
	if !logger.Enabled() {
		return
	}
	now := time.Now()
	p.mu.Lock()
	if now.Sub(p.lastLog) < ProgressLogInterval || p.started.IsZero() {
		p.mu.Unlock()
		return
	}
	p.lastLog = now
	elapsed := now.Sub(p.started)
	p.mu.Unlock()
	logger.Info("Initial sync in progress", "gvr", p.gvr, "received", received, "elapsed", elapsed.Round(time.Millisecond), "perSecond", int64(rate(received, elapsed)))
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
	klog.FromContext(ctx).V(ProgressLogVerbosity).Info("Initial sync done", "gvr", p.gvr, "received", received,
		"elapsed", elapsed.Round(time.Millisecond), "perSecond", int64(rate(received, elapsed)))
}

// snapshot is the progress as Status reports it; filled says whether the
// cache is filled (it may be a moment before filledAt hears of it).
func (p *syncProgress) snapshot(filled bool) SyncProgress {
	p.mu.Lock()
	started, end := p.started, p.filled
	p.mu.Unlock()
	s := SyncProgress{Received: p.received.Load(), Started: started, Done: filled || !end.IsZero()}
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
