package generic

import (
	"context"
	"sync"

	"k8s.io/apimachinery/pkg/util/wait"
)

// ServedWatch watches what the server serves, for the informers of a
// Registry that wait for their resource (NotServed: a CRD not installed
// yet, or deleted): it calls changed whenever the server may have begun to
// serve a resource it did not (a CustomResourceDefinition created or
// changed), and returns once ctx ends. It is run in a goroutine of its
// own, at most one at a time per Registry; changed is safe for concurrent
// use and returns at once. A ServedWatch that cannot watch (no client,
// RBAC) should retry with a backoff of its own or return: the informers
// still probe their resource with their backoff, 1 s doubling to 30 s.
type ServedWatch func(ctx context.Context, changed func())

// WithServedWatch sets the Registry's ServedWatch. The Registry runs it,
// under the context given to Start, while any of its informers is
// NotServed, and stops it (ending its context) once none is, or at
// Shutdown, which waits for it to return. Each call of changed makes every
// NotServed informer ask the server for its resource at once, and then
// again 0.25, 0.5, 1, 2 s ... apart, instead of at the next time of its
// backoff (1 s doubling to 30 s): an informer of a CRD installed an hour
// after it started syncs within about a second of the CRD being
// Established, where its backoff alone would take up to 30 s.
// typed.NewFactory sets one that watches CustomResourceDefinitions (see
// typed.Clients). nil, the default of NewRegistry and NewFactory, runs
// none.
func WithServedWatch(watch ServedWatch) FactoryOption {
	return factoryOption(func(o *options) { o.servedWatch = watch })
}

// servedChanges tells the NotServed informers of a Registry when the
// resources the server serves may have changed (listwatch's
// Hooks.ServedChanged), and runs the Registry's ServedWatch while any of
// its informers is NotServed, as their states say (stateChanged). It is
// safe for concurrent use. A nil *servedChanges (an informer of no
// Registry, NewInformer) is never told of a change.
type servedChanges struct {
	watch ServedWatch // nil: none
	// probes is the informers' probe backoff while NotServed; zero is
	// the chain's default (tests set others: export_test.go).
	probes wait.Backoff

	mu sync.Mutex
	// changed is closed, and replaced, at each change.
	changed chan struct{}
	// notServed counts the Registry's informers whose State is NotServed.
	notServed int
	// ctx is Start's, nil before Start; watchCtx and cancel are the
	// running watch's, nil if none runs.
	ctx      context.Context
	watchCtx context.Context
	cancel   context.CancelFunc
	shutdown bool
	// running counts the watch's goroutines, for Shutdown.
	running sync.WaitGroup
}

func newServedChanges(watch ServedWatch) *servedChanges {
	return &servedChanges{watch: watch, changed: make(chan struct{})}
}

// probeBackoff is the informers' probe backoff while NotServed; zero is
// the chain's default.
func (s *servedChanges) probeBackoff() wait.Backoff {
	if s == nil {
		return wait.Backoff{}
	}
	return s.probes
}

// Changed returns a channel closed at the next change.
func (s *servedChanges) Changed() <-chan struct{} {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.changed
}

// change tells every NotServed informer that the resources served may have
// changed: ServedWatch's changed.
func (s *servedChanges) change() {
	s.mu.Lock()
	defer s.mu.Unlock()
	close(s.changed)
	s.changed = make(chan struct{})
}

// stateChanged is told each change of State of an informer of the
// Registry, in the order of the informer's changes.
func (s *servedChanges) stateChanged(from, to State) {
	if s == nil || (from == NotServed) == (to == NotServed) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if to == NotServed {
		s.notServed++
	} else {
		s.notServed--
	}
	s.runWatchLocked()
}

// start records Start's context, under which the watch runs.
func (s *servedChanges) start(ctx context.Context) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ctx == nil || s.ctx.Err() != nil {
		s.ctx = ctx
	}
	s.runWatchLocked()
}

// stop stops the watch and waits for it to return; it runs no more.
func (s *servedChanges) stop() {
	s.mu.Lock()
	s.shutdown = true
	s.runWatchLocked()
	s.mu.Unlock()
	s.running.Wait()
}

// runWatchLocked runs the watch if an informer is NotServed, and stops it
// otherwise; s.mu must be held.
func (s *servedChanges) runWatchLocked() {
	want := s.watch != nil && s.notServed > 0 && !s.shutdown && s.ctx != nil && s.ctx.Err() == nil
	running := s.watchCtx != nil && s.watchCtx.Err() == nil
	switch {
	case want && !running:
		ctx, cancel := context.WithCancel(s.ctx)
		s.watchCtx, s.cancel = ctx, cancel
		watch := s.watch
		s.running.Go(func() {
			defer cancel()
			watch(ctx, s.change)
		})
	case !want && s.cancel != nil:
		s.cancel()
		s.watchCtx, s.cancel = nil, nil
	}
}
