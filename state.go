package generic

import (
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// State is where an informer stands. Switch on it; do not parse its String.
//
// An informer's State changes only as this table says; each change reaches
// the StateHandler once, in order. Rows are the State, columns what
// happened; "-" leaves the State as it is.
//
//	            | Run    | server listed  | cache filled | list 404   | 403       | stopped
//	NotStarted  | Syncing| -              | -            | -          | -         | Stopped
//	Syncing     | -      | -              | Synced       | NotServed  | Forbidden | Stopped
//	Synced      | -      | -              | -            | NotServed  | Forbidden | Stopped
//	NotServed   | -      | Synced/Syncing | Synced       | -          | Forbidden | Stopped
//	Forbidden   | -      | Synced/Syncing | Synced       | NotServed  | -         | Stopped
//	Stopped     | -      | -              | -            | -          | -         | -
//
// "server listed": a list of the whole resource (or a WatchList stream) was
// answered; it leads to Synced if the cache was filled once before, else to
// Syncing, whose "cache filled" (the informer's HasSynced turning true)
// then leads to Synced. "list 404": the server answered a list 404 Not
// Found; with WithStopWhenNotServed that is "stopped" instead. "403": a list
// or watch answered 403 Forbidden. "stopped": the informer's Run has
// stopped its shared informer (its cache changes no more and its handlers
// are done; the rest of Run, its watches' goroutines, ends right after),
// whoever ran it (a Factory, or a caller of Informer().Run), or it stopped
// for good. A watch that fails, even with 404, changes no State: the
// reflector relists, and the relist's answer decides.
type State int

const (
	// NotStarted: made, not run yet.
	NotStarted State = iota
	// Syncing: started, and filling its cache for the first time.
	Syncing
	// Synced: its cache has been filled and its last list succeeded.
	Synced
	// NotServed: the server answered a list 404 Not Found: the resource is
	// not served (its CRD was deleted, its API group removed). The informer
	// probes it, 1 s after the 404 and then at doubling intervals up to
	// every 30 s, and relists by itself when it is served again.
	NotServed
	// Forbidden: the server answered 403 Forbidden: the informer's user
	// may not list or watch the resource. The informer keeps retrying with
	// client-go's backoff.
	Forbidden
	// Stopped: the informer has stopped (released, shut down, its context
	// ended, or stopped for good) and will not run again.
	Stopped
)

var stateNames = [...]string{"NotStarted", "Syncing", "Synced", "NotServed", "Forbidden", "Stopped"}

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
	// list has succeeded since.
	LastError error
	// LastSync is when a list of the whole resource (or the WatchList
	// stream that replaces it) last succeeded; zero if none has.
	LastSync time.Time
	// Shard is the informer's shard, "index/count" (see WithShard); while
	// a reshard is under way, "current+next". "" when it holds every
	// object.
	Shard string
	// CurrentShard is the shard the informer selects, as a value: Count
	// 1 when it selects every object (zero in a StateHandler's Status,
	// whose Shard is ""), above 1 when its cache holds only part of the
	// objects. While a reshard is under way it is the shard before
	// ("current" of Shard's "current+next"): the cache holds at least
	// its objects. Read it, not Shard, to tell whether the informer is
	// sharded (package controller does).
	CurrentShard Shard
	// ShardFilteredByClient is true once the server was seen to ignore
	// the ShardSelector (no ShardedListAndWatch feature gate): the
	// informer receives every object and keeps its shard's.
	ShardFilteredByClient bool
	// FieldSelector is the informer's field selector (WithFieldSelector,
	// and one its WithTweakListOptions sets), as fields.Selector's String
	// writes it; "" for none, and for an informer of NewInformer, whose
	// ListerWatcher selects on its own. A field selector on other fields
	// than metadata.name and metadata.namespace is one WaitForWrite cannot
	// judge a written object against (package controller reads it).
	FieldSelector string
	// Progress is the initial sync's progress (progress.go): objects
	// received so far, and how fast. Informer.Status and Factory.Statuses
	// set it; the StateHandler's Status has it zero.
	Progress SyncProgress
	// DroppedErrors counts the errors the informer dropped instead of
	// reporting them to its ErrorHandler, since it was made: those met
	// while 1,000 reports were waiting for the ErrorHandler already (see
	// WithErrorHandler). Informer.Status and Factory.Statuses set it; the
	// StateHandler's Status has it zero.
	DroppedErrors int64
	// LastEventResourceVersion is the resourceVersion of the newest object
	// the informer has handed to its cache and handlers, from a watch
	// event (an add, update or delete; not a bookmark) or a list; "" before
	// the first. A handler that has been called with an object at this
	// resourceVersion or a later one has been told of every change the
	// informer had taken in when Status was read (a watch delivers in
	// resourceVersion order), except, during a relist, the notifications
	// of the relist itself, which come in the list's order: how package
	// controller's WaitIdle knows that no event is on its way to its
	// handlers. Informer.Status and Factory.Statuses set it; the
	// StateHandler's Status has it "".
	LastEventResourceVersion string
	// Stale is how many objects the cache holds at their last good state
	// although the server has a newer state of each that did not decode,
	// convert or transform (each reported to the ErrorHandler as a
	// *ConversionError); StaleObjects names them. Such an object is never
	// delivered as deleted, since the server still has it. Informer.Status
	// and Factory.Statuses set it; the StateHandler's Status has it zero.
	Stale int
}

// StateHandler is told of every change of an informer's State, once per
// change and in order. It is called from a goroutine of the informer's own,
// one call at a time per informer; it may call back into the informer and
// its Factory (Status, Acquire, Handle.Release), but must not call
// Factory.Shutdown, which waits for it (cancel Start's context instead).
type StateHandler func(Status)

// event is what happens to an informer, a column of the table on State.
type event int

const (
	evRun event = iota
	evListed
	evCacheFilled
	evNotFound
	evForbidden
	evStopped
)

// same marks a table cell that leaves the State unchanged; afterList is
// "Synced/Syncing".
const (
	same      State = -1
	afterList State = -2
)

// transitions is the table in State's doc, row by State, column by event.
var transitions = map[State][6]State{
	//           run      listed     cache filled notFound   forbidden  stopped
	NotStarted: {Syncing, same, same, same, same, Stopped},
	Syncing:    {same, same, Synced, NotServed, Forbidden, Stopped},
	Synced:     {same, same, same, NotServed, Forbidden, Stopped},
	NotServed:  {same, afterList, Synced, same, Forbidden, Stopped},
	Forbidden:  {same, afterList, Synced, NotServed, same, Stopped},
	Stopped:    {same, same, same, same, same, same},
}

// next returns the State after e from s; filled says whether the cache was
// filled once before.
func next(s State, e event, filled bool) State {
	to := transitions[s][e]
	switch to {
	case same:
		return s
	case afterList:
		if filled {
			return Synced
		}
		return Syncing
	}
	return to
}

// stateMachine holds an informer's Status and moves it along the table. It
// is safe for concurrent use; its getters have no side effects.
type stateMachine struct {
	mu     sync.Mutex
	status Status
	// filled: the cache was filled once (evCacheFilled happened).
	filled bool
	// stopped is closed on the move to Stopped.
	stopped chan struct{}
	// changed is closed, and replaced, at every change of State.
	changed chan struct{}
	// notify delivers changes to the StateHandler, in order, off the
	// goroutine that made them.
	notify   func(func())
	onChange StateHandler
	// moved is told each change of State at once, under mu, so in the
	// order of the changes: the Registry counts its NotServed informers
	// with it (servedChanges). It must not call the machine.
	moved func(from, to State)
}

func newStateMachine(gvr schema.GroupVersionResource, onChange StateHandler, notify func(func()), moved func(from, to State)) *stateMachine {
	if moved == nil {
		moved = func(State, State) {}
	}
	return &stateMachine{
		status:   Status{GVR: gvr, State: NotStarted, Since: time.Now()},
		stopped:  make(chan struct{}),
		changed:  make(chan struct{}),
		notify:   notify,
		onChange: onChange,
		moved:    moved,
	}
}

func (m *stateMachine) get() Status {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.status
}

// stoppedChan is closed when the State becomes Stopped.
func (m *stateMachine) stoppedChan() <-chan struct{} { return m.stopped }

// state returns the State and a channel closed when it next changes.
func (m *stateMachine) state() (State, <-chan struct{}) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.status.State, m.changed
}

// fire applies e. err is recorded as LastError for evNotFound, evForbidden
// and evStopped; evListed and evCacheFilled clear it and stamp LastSync.
func (m *stateMachine) fire(e event, err error) {
	m.mu.Lock()
	before := m.status.State
	after := next(before, e, m.filled)
	if before == Stopped {
		m.mu.Unlock()
		return
	}
	now := time.Now()
	switch e {
	case evListed, evCacheFilled:
		m.status.LastError = nil
		m.status.LastSync = now
		m.filled = m.filled || e == evCacheFilled
	case evNotFound, evForbidden:
		m.status.LastError = err
	case evStopped:
		if err != nil {
			m.status.LastError = err
		}
	}
	if after == before {
		m.mu.Unlock()
		return
	}
	m.status.State = after
	m.status.Since = now
	m.moved(before, after)
	if after == Stopped {
		close(m.stopped)
	}
	close(m.changed)
	m.changed = make(chan struct{})
	status := m.status
	m.mu.Unlock()
	if m.onChange != nil {
		m.notify(func() { m.onChange(status) })
	}
}

// failed records an error that changes no State (a failed watch, a list
// error other than 404 and 403).
func (m *stateMachine) failed(err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.status.State != Stopped {
		m.status.LastError = err
	}
}

// servedHooks tells the state machine what the server answered, as the
// list/watch chain reports it (listwatch.Served).
type servedHooks struct{ m *stateMachine }

func (h servedHooks) Listed()                  { h.m.fire(evListed, nil) }
func (h servedHooks) NotServed(err error)      { h.m.fire(evNotFound, err) }
func (h servedHooks) StoppedForGood(err error) { h.m.fire(evStopped, err) }
func (h servedHooks) Forbidden(err error)      { h.m.fire(evForbidden, err) }
func (h servedHooks) Failed(err error)         { h.m.failed(err) }
