package generic

import (
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// State is where an informer stands. Switch on it; do not parse its String.
type State int

const (
	// Syncing: started, and filling its cache for the first time.
	Syncing State = iota
	// Synced: its cache has been filled and its last list or watch
	// succeeded.
	Synced
	// NotServed: the server answered 404 Not Found: the resource is not
	// served (its CRD was deleted, its API group removed). The informer
	// probes it, 1 s after the 404 and then at doubling intervals up to
	// every 30 s, and relists by itself when it is served again.
	NotServed
	// Forbidden: the server answered 403 Forbidden: the informer's user
	// may not list or watch the resource.
	Forbidden
	// Stopped: the informer has stopped (released, shut down, or its
	// context ended) and will not run again.
	Stopped
)

var stateNames = [...]string{"Syncing", "Synced", "NotServed", "Forbidden", "Stopped"}

// String returns the State's name, as in the constants ("NotServed").
func (s State) String() string {
	if s >= 0 && int(s) < len(stateNames) {
		return stateNames[s]
	}
	return fmt.Sprintf("State(%d)", int(s))
}

// Status is what an informer reports of itself.
type Status struct {
	// GVR is the informer's resource.
	GVR schema.GroupVersionResource
	// State is where the informer stands.
	State State
	// Since is when it entered State.
	Since time.Time
	// LastError is the last error its list or watch met, or nil once a
	// list or watch has succeeded since.
	LastError error
	// LastSync is when a list of the whole resource (or the WatchList
	// stream that replaces it) last succeeded; zero if none has.
	LastSync time.Time
}

// StateHandler is told of every change of an informer's State. It is called
// from the informer's goroutines: it must be safe for concurrent use and
// return quickly.
type StateHandler func(Status)

// statusTracker holds an informer's Status and tells its StateHandler of
// changes. It is safe for concurrent use.
type statusTracker struct {
	mu       sync.Mutex
	status   Status
	onChange StateHandler
	// stopped is closed when the state becomes Stopped.
	stopped chan struct{}
}

func newStatusTracker(gvr schema.GroupVersionResource, onChange StateHandler) *statusTracker {
	return &statusTracker{
		status:   Status{GVR: gvr, State: Syncing, Since: time.Now()},
		onChange: onChange,
		stopped:  make(chan struct{}),
	}
}

func (t *statusTracker) get() Status {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.status
}

// set moves to state, recording err (nil clears the last error); a Stopped
// tracker stays stopped.
func (t *statusTracker) set(state State, err error) {
	t.update(func(s *Status) {
		s.State = state
		s.LastError = err
	})
}

// synced records a successful full list: the state becomes Synced.
func (t *statusTracker) synced() {
	now := time.Now()
	t.update(func(s *Status) {
		s.State = Synced
		s.LastError = nil
		s.LastSync = now
	})
}

// firstSync records the end of the first sync, unless the state moved on
// already (a 404 or 403 met before the sync was noticed).
func (t *statusTracker) firstSync() {
	now := time.Now()
	t.update(func(s *Status) {
		if s.State == Syncing {
			s.State = Synced
			s.LastError = nil
			s.LastSync = now
		}
	})
}

// failed records an error without a change of state.
func (t *statusTracker) failed(err error) {
	t.update(func(s *Status) { s.LastError = err })
}

// stoppedChan is closed when the state becomes Stopped: the informer's Run
// has returned, or it stopped for good (WithStopWhenNotServed).
func (t *statusTracker) stoppedChan() <-chan struct{} { return t.stopped }

func (t *statusTracker) update(change func(*Status)) {
	t.mu.Lock()
	if t.status.State == Stopped {
		t.mu.Unlock()
		return
	}
	before := t.status.State
	change(&t.status)
	changed := t.status.State != before
	if changed {
		t.status.Since = time.Now()
		if t.status.State == Stopped {
			close(t.stopped)
		}
	}
	status := t.status
	t.mu.Unlock()
	if changed && t.onChange != nil {
		t.onChange(status)
	}
}
