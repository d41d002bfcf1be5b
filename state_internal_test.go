package generic

import (
	"errors"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/generic-informers/generic/internal/callbacks"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var eventNames = map[event]string{
	evRun: "run", evListed: "listed", evCacheFilled: "cache filled",
	evNotFound: "404", evForbidden: "403", evStopped: "stopped",
}

// TestTransitions walks every cell of the table in State's doc: from each
// State, each event, with the cache filled before or not.
func TestTransitions(t *testing.T) {
	tests := []struct {
		from   State
		filled bool
		want   map[event]State // events missing here leave the State as it is
	}{
		{from: NotStarted, want: map[event]State{evRun: Syncing, evStopped: Stopped}},
		{from: Syncing, want: map[event]State{evCacheFilled: Synced, evNotFound: NotServed, evForbidden: Forbidden, evStopped: Stopped}},
		{from: Synced, filled: true, want: map[event]State{evNotFound: NotServed, evForbidden: Forbidden, evStopped: Stopped}},
		{from: NotServed, want: map[event]State{evListed: Syncing, evCacheFilled: Synced, evForbidden: Forbidden, evStopped: Stopped}},
		{from: NotServed, filled: true, want: map[event]State{evListed: Synced, evCacheFilled: Synced, evForbidden: Forbidden, evStopped: Stopped}},
		{from: Forbidden, want: map[event]State{evListed: Syncing, evCacheFilled: Synced, evNotFound: NotServed, evStopped: Stopped}},
		{from: Forbidden, filled: true, want: map[event]State{evListed: Synced, evCacheFilled: Synced, evNotFound: NotServed, evStopped: Stopped}},
		{from: Stopped, filled: true, want: map[event]State{}},
	}
	for _, tc := range tests {
		for e, name := range eventNames {
			want, ok := tc.want[e]
			if !ok {
				want = tc.from
			}
			t.Run(tc.from.String()+"/"+name, func(t *testing.T) {
				if diff := cmp.Diff(want, next(tc.from, e, tc.filled)); diff != "" {
					t.Errorf("next(%v, %s, filled=%v) (-want +got):\n%s", tc.from, name, tc.filled, diff)
				}
			})
		}
	}
}

// TestStateHandlerHearsEachChangeOnceInOrder fires a run of events through
// a machine and checks what its StateHandler is told: each change once, in
// order, with the errors and nothing for events that change nothing.
func TestStateHandlerHearsEachChangeOnceInOrder(t *testing.T) {
	notFound := errors.New("404")
	var mu sync.Mutex
	var heard []State
	var lastErrors []error
	calls := callbacks.New(1, nil)
	m := newStateMachine(schema.GroupVersionResource{Resource: "widgets"}, func(s Status) {
		mu.Lock()
		defer mu.Unlock()
		heard = append(heard, s.State)
		lastErrors = append(lastErrors, s.LastError)
	}, calls.Enqueue, nil)

	for _, step := range []struct {
		e   event
		err error
	}{
		{e: evRun}, {e: evNotFound, err: notFound}, {e: evNotFound, err: notFound}, {e: evListed},
		{e: evCacheFilled}, {e: evListed}, {e: evStopped}, {e: evRun}, {e: evCacheFilled},
	} {
		m.fire(step.e, step.err)
	}
	calls.Wait()
	if diff := cmp.Diff([]State{Syncing, NotServed, Syncing, Synced, Stopped}, heard); diff != "" {
		t.Errorf("states heard (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]error{nil, notFound, nil, nil, nil}, lastErrors, cmp.Comparer(func(a, b error) bool { return a == b })); diff != "" {
		t.Errorf("last errors heard (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(Stopped, m.get().State); diff != "" {
		t.Errorf("final state (-want +got):\n%s", diff)
	}
}
