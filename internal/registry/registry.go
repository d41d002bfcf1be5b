// Package registry is the bookkeeping of a factory's shared informers:
// one per key (a resource and a selection), the holds on it, its run, its
// replacement when it has stopped, and the end of them all.
//
// An entry is made on first acquire and counts holds; the last release
// removes it and cancels its run (without waiting: see Release). An entry
// whose runner has stopped, or whose run's context has ended, is replaced,
// at the next acquire or Start, by a fresh one made as it was, and the
// holds carry over: Latest follows them. The stopped one, if its run goes
// on (an informer that stopped for good still delivers its deletes), is
// retired, and cancelled when the next one of its key retires, at the last
// release, or at Shutdown, which waits for every run.
//
// It imports nothing of this module: what it runs (R) and how it tells
// that one stopped are the factory's, handed to New.
package registry

import (
	"context"
	"sync"
	"sync/atomic"
)

// Registry holds the runners of a factory by key. It is safe for
// concurrent use. The zero Registry is not usable; call New.
type Registry[K comparable, R any] struct {
	run     func(ctx context.Context, r R)
	stopped func(r R) bool
	// deferred: runners acquired after Start run at the next Start, as
	// client-go's factories' informers do.
	deferred bool

	mu      sync.Mutex
	entries map[K]*Entry[K, R]
	// retired holds, per key, the last entry that stopped and was replaced
	// while its run went on.
	retired map[K]*Entry[K, R]
	// startCtx is the context of the last Start, under which runners
	// acquired later run at once; nil before Start or if deferred.
	startCtx     context.Context
	shuttingDown bool
	// live holds the entries whose run has not returned, released ones
	// included, so that Shutdown waits for all.
	live map[*Entry[K, R]]struct{}
	// closers holds a channel per closeAfter goroutine, closed when it
	// has ended, so that Shutdown waits for them too.
	closers map[chan struct{}]struct{}
}

// Entry is one runner of a Registry and how it runs.
type Entry[K comparable, R any] struct {
	Key    K
	Runner R
	// newRunner makes a fresh runner as this one was, to replace it.
	newRunner func() R
	// holders counts the holds not yet released.
	holders int
	// successor is the entry that replaced this one when it stopped; the
	// holds carried over to it. Set once, under the Registry's lock; read
	// without it by Latest.
	successor atomic.Pointer[Entry[K, R]]
	// cancel stops the run; nil until the Registry ran it. runCtx is the
	// run's context.
	cancel context.CancelFunc
	runCtx context.Context
	// done is closed when the run has returned.
	done chan struct{}
	// gone is closed once the entry (or the one that replaced it) has
	// left the Registry and every run of it has returned (Gone).
	gone *gone
}

// gone is the end of an entry and of the entries that replace it.
type gone struct {
	ch   chan struct{}
	once sync.Once
}

func newGone() *gone { return &gone{ch: make(chan struct{})} }

func (g *gone) close() { g.once.Do(func() { close(g.ch) }) }

// closeAfter closes g once every channel of runs is closed, without
// blocking the caller: in a goroutine that Shutdown waits for (closers),
// so that no goroutine of the Registry outlives Shutdown. r.mu must be
// held.
func (r *Registry[K, R]) closeAfter(g *gone, runs []chan struct{}) {
	if len(runs) == 0 {
		g.close()
		return
	}
	closed := make(chan struct{})
	r.closers[closed] = struct{}{}
	go func() {
		defer func() {
			r.mu.Lock()
			delete(r.closers, closed)
			r.mu.Unlock()
			close(closed)
		}()
		for _, done := range runs {
			<-done
		}
		g.close()
	}()
}

// Gone returns a channel closed once the entry, or the entry that replaced
// it, has left the Registry (its last Release, RemoveWhere, Shutdown) and
// every run of it has returned. An entry acquired after Shutdown, which
// will not run, is gone at once.
func (e *Entry[K, R]) Gone() <-chan struct{} { return e.gone.ch }

// runsOf returns the done channels of the entries' runs, of those that
// ran; nil entries are skipped. r.mu must be held.
func runsOf[K comparable, R any](entries ...*Entry[K, R]) []chan struct{} {
	var runs []chan struct{}
	for _, e := range entries {
		if e != nil && e.started() {
			runs = append(runs, e.done)
		}
	}
	return runs
}

// New returns a Registry that runs a runner with run (it returns when the
// runner has stopped and its goroutines have ended) and tells that one has
// stopped, and will not run again, with stopped. With deferred, runners
// acquired after Start run at the next Start.
func New[K comparable, R any](run func(context.Context, R), stopped func(R) bool, deferred bool) *Registry[K, R] {
	return &Registry[K, R]{
		run: run, stopped: stopped, deferred: deferred,
		entries: map[K]*Entry[K, R]{},
		retired: map[K]*Entry[K, R]{},
		live:    map[*Entry[K, R]]struct{}{},
		closers: map[chan struct{}]struct{}{},
	}
}

func (e *Entry[K, R]) started() bool { return e.cancel != nil }

// Latest returns the entry that holds e's holds now: e, or the entry that
// replaced it (Acquire, Start), or the one that replaced that, and so on.
// It takes no lock: a replacement made at the same moment may be missed,
// and is seen by the next call. Once e has left the Registry (its last
// Release, RemoveWhere, Shutdown), it is the last entry of its line.
func (e *Entry[K, R]) Latest() *Entry[K, R] {
	for next := e.successor.Load(); next != nil; next = e.successor.Load() {
		e = next
	}
	return e
}

// running reports whether the entry's run goes on.
func (e *Entry[K, R]) running() bool {
	select {
	case <-e.done:
		return false
	default:
		return true
	}
}

// cancelIfStarted cancels the entry's run without waiting for it.
func (e *Entry[K, R]) cancelIfStarted() {
	if e != nil && e.cancel != nil {
		e.cancel()
	}
}

// Acquire takes a hold on the runner of key, making it with newRunner if there
// is none or the one there is over (stopped, or its run's context ended;
// not while the Registry is shutting down), and runs it if the Registry
// has started. newRunner is called with the Registry's lock held: it must
// not call back into the Registry.
func (r *Registry[K, R]) Acquire(key K, newRunner func() R) *Entry[K, R] {
	r.mu.Lock()
	e, previous := r.entryFor(key, newRunner)
	e.holders++
	if !e.started() && r.startCtx != nil && r.startCtx.Err() == nil && !r.shuttingDown {
		r.runLocked(r.startCtx, e)
	}
	if r.shuttingDown && !e.started() {
		e.gone.close() // it will never run
	}
	r.mu.Unlock()
	previous.cancelIfStarted()
	return e
}

// entryFor returns the live entry of key, making it if there is none or
// replacing the one there if it is over (see replaceLocked). r.mu must be
// held.
func (r *Registry[K, R]) entryFor(key K, newRunner func() R) (e, previous *Entry[K, R]) {
	e, ok := r.entries[key]
	switch {
	case !ok:
		e = &Entry[K, R]{Key: key, Runner: newRunner(), newRunner: newRunner, gone: newGone()}
		r.entries[key] = e
		return e, nil
	case r.over(e):
		return r.replaceLocked(e)
	}
	return e, nil
}

// over reports whether e should be replaced: its runner has stopped, or
// the Registry runs it and its run's context has ended (it is stopping,
// and will not run again), and the Registry is not shutting down. A
// runner whose run returned at once, as one run by hand already does,
// is over when it stops. r.mu must be held.
func (r *Registry[K, R]) over(e *Entry[K, R]) bool {
	if r.shuttingDown {
		return false
	}
	return r.stopped(e.Runner) || (e.started() && e.running() && e.runCtx.Err() != nil)
}

// replaceLocked replaces e, which is over, by a fresh entry made as e was
// (its newRunner), to which e's holds carry over. An e whose run goes on
// is kept as retired, and the one retired before it is returned, to be
// cancelled. r.mu must be held.
func (r *Registry[K, R]) replaceLocked(e *Entry[K, R]) (fresh, previous *Entry[K, R]) {
	fresh = &Entry[K, R]{Key: e.Key, Runner: e.newRunner(), newRunner: e.newRunner, gone: e.gone, holders: e.holders}
	r.entries[e.Key] = fresh
	e.successor.Store(fresh) // the holds, and their end (gone), carry over
	if !e.started() || !e.running() {
		return fresh, nil
	}
	previous = r.retired[e.Key]
	r.retired[e.Key] = e
	return fresh, previous
}

// Release drops one hold on e, or on the entry that replaced it, and
// reports whether it was the last: then the entry leaves the Registry and
// its run (and that of the entry retired before it) is cancelled. It does
// not wait for the run to return: Shutdown does.
func (r *Registry[K, R]) Release(e *Entry[K, R]) bool {
	r.mu.Lock()
	e = e.Latest()
	if r.entries[e.Key] != e {
		r.mu.Unlock()
		return false // released already, or shut down
	}
	return r.releaseLocked(e)
}

// ReleaseKey drops one hold on the entry of key, as Release of it would,
// for a caller that counts its holds by key rather than keeping each
// Entry; false if key has no entry.
func (r *Registry[K, R]) ReleaseKey(key K) bool {
	r.mu.Lock()
	e, ok := r.entries[key]
	if !ok {
		r.mu.Unlock()
		return false
	}
	return r.releaseLocked(e)
}

// releaseLocked drops one hold on e, an entry of the Registry, and
// unlocks r.mu.
func (r *Registry[K, R]) releaseLocked(e *Entry[K, R]) bool {
	e.holders--
	if e.holders > 0 {
		r.mu.Unlock()
		return false
	}
	retired := r.removeLocked(e)
	r.mu.Unlock()
	retired.cancelIfStarted()
	e.cancelIfStarted()
	return true
}

// removeLocked takes e out of the Registry, with the entry retired before
// it (returned, to be cancelled), and closes its Gone once their runs have
// returned. r.mu must be held.
func (r *Registry[K, R]) removeLocked(e *Entry[K, R]) (retired *Entry[K, R]) {
	delete(r.entries, e.Key)
	retired = r.retired[e.Key]
	delete(r.retired, e.Key)
	r.closeAfter(e.gone, runsOf(e, retired))
	return retired
}

// RemoveWhere takes every entry whose key matches out of the Registry,
// whatever its holds, and cancels its runs (and those of the entries
// retired before them), as a last Release of each would. It returns a
// channel closed once all those runs have returned and every removed
// entry's Gone is closed. Later Releases of the removed entries do nothing.
func (r *Registry[K, R]) RemoveWhere(match func(K) bool) <-chan struct{} {
	r.mu.Lock()
	var removed []*Entry[K, R]
	var gone []chan struct{}
	for key, e := range r.entries {
		if match(key) {
			removed = append(removed, e, r.removeLocked(e))
			gone = append(gone, e.gone.ch)
		}
	}
	all := newGone()
	r.closeAfter(all, gone)
	r.mu.Unlock()
	for _, e := range removed {
		e.cancelIfStarted()
	}
	return all.ch
}

// Entries returns the entries held, started or not.
func (r *Registry[K, R]) Entries() []*Entry[K, R] {
	r.mu.Lock()
	defer r.mu.Unlock()
	all := make([]*Entry[K, R], 0, len(r.entries))
	for _, e := range r.entries {
		all = append(all, e)
	}
	return all
}

// Started returns the entries held that the Registry ran.
func (r *Registry[K, R]) Started() []*Entry[K, R] {
	r.mu.Lock()
	defer r.mu.Unlock()
	started := make([]*Entry[K, R], 0, len(r.entries))
	for _, e := range r.entries {
		if e.started() {
			started = append(started, e)
		}
	}
	return started
}

// Running returns the runners whose run has not returned, released and
// retired ones included: those Shutdown waits for.
func (r *Registry[K, R]) Running() []R {
	r.mu.Lock()
	defer r.mu.Unlock()
	running := make([]R, 0, len(r.live))
	for e := range r.live {
		running = append(running, e.Runner)
	}
	return running
}

// Start runs every entry that is not running yet, each in its own
// goroutine, until ctx ends or Shutdown, and those acquired later at once
// under ctx (unless deferred). An entry that is over (stopped, or its run's
// context ended, as when the context of an earlier Start ended) is
// replaced first, as Acquire would replace it, so that its holds are on a
// running runner again; not if deferred, where client-go's factories leave
// a stopped informer stopped, nor if ctx has ended already. It does not
// block, and does nothing after Shutdown.
func (r *Registry[K, R]) Start(ctx context.Context) {
	r.mu.Lock()
	if r.shuttingDown {
		r.mu.Unlock()
		return
	}
	if !r.deferred {
		r.startCtx = ctx
	}
	var previous []*Entry[K, R]
	for _, e := range r.entries {
		if !r.deferred && ctx.Err() == nil && e.started() && r.over(e) {
			var retired *Entry[K, R]
			e, retired = r.replaceLocked(e)
			previous = append(previous, retired)
		}
		if !e.started() {
			r.runLocked(ctx, e)
		}
	}
	r.mu.Unlock()
	for _, e := range previous {
		e.cancelIfStarted()
	}
}

// runLocked starts one entry's run; r.mu must be held.
func (r *Registry[K, R]) runLocked(ctx context.Context, e *Entry[K, R]) {
	runCtx, cancel := context.WithCancel(ctx)
	e.cancel, e.runCtx = cancel, runCtx
	e.done = make(chan struct{})
	r.live[e] = struct{}{}
	go func() {
		defer close(e.done)
		defer cancel()
		r.run(runCtx, e.Runner)
		r.mu.Lock()
		delete(r.live, e)
		r.mu.Unlock()
	}()
}

// Shutdown cancels every run, released and retired ones included, and
// returns when all have returned. After it, Start does nothing. It may be
// called any number of times, also concurrently; it must not be called
// from a run, which it would wait for.
func (r *Registry[K, R]) Shutdown() {
	r.mu.Lock()
	r.shuttingDown = true
	all := make([]*Entry[K, R], 0, len(r.live))
	for e := range r.live {
		all = append(all, e)
	}
	gones := make([]*gone, 0, len(r.entries))
	for _, e := range r.entries {
		gones = append(gones, e.gone)
	}
	r.mu.Unlock()
	for _, e := range all {
		e.cancelIfStarted()
	}
	for _, e := range all {
		<-e.done
	}
	// Every run has returned: the entries are gone, and the goroutines
	// closing the Gone of released or removed ones end at once.
	for _, g := range gones {
		g.close()
	}
	r.mu.Lock()
	closers := make([]chan struct{}, 0, len(r.closers))
	for closed := range r.closers {
		closers = append(closers, closed)
	}
	r.mu.Unlock()
	for _, closed := range closers {
		<-closed
	}
}
