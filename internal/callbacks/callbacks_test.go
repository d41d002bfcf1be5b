package callbacks

import (
	"fmt"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestCallbacksWait enqueues calls, one of which may end its goroutine
// (runtime.Goexit, as t.FailNow in a handler does), and checks that Wait
// returns, having seen every call made in order but the one that ended
// early. Before, a call that ended its goroutine left the queue with no
// goroutine to drain it, and wait spun for ever on the closed channel.
func TestCallbacksWait(t *testing.T) {
	tests := []struct {
		name   string
		goexit int // the call that ends its goroutine; -1 for none
		want   []int
	}{
		{"every call returns", -1, []int{0, 1, 2, 3}},
		{"the first call ends its goroutine", 0, []int{1, 2, 3}},
		{"a middle call ends its goroutine", 2, []int{0, 1, 3}},
		{"the last call ends its goroutine", 3, []int{0, 1, 2}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q := New(10, nil)
			var mu sync.Mutex
			var made []int
			for i := range 4 {
				q.Enqueue(func() {
					if i == tc.goexit {
						runtime.Goexit()
					}
					mu.Lock()
					made = append(made, i)
					mu.Unlock()
				})
			}
			waited := make(chan struct{})
			go func() { q.Wait(); close(waited) }()
			select {
			case <-waited:
			case <-time.After(10 * time.Second):
				t.Fatal("wait did not return")
			}
			mu.Lock()
			defer mu.Unlock()
			if diff := cmp.Diff(tc.want, slices.Clone(made)); diff != "" {
				t.Errorf("calls made (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDroppableCallsAreBounded blocks the first call, then asks for more:
// droppable calls past maxWaiting waiting are dropped and counted, and
// onDrop told of each; the others are all made, in order. Before, every
// call waited, however many: a blocked ErrorHandler under a flood of
// errors held them all in memory.
func TestDroppableCallsAreBounded(t *testing.T) {
	type ask struct {
		n         int
		droppable bool
	}
	tests := []struct {
		name       string
		maxWaiting int
		asks       []ask // after the blocked first call
		wantMade   []string
		wantKept   []bool // what each EnqueueDroppable returned
	}{
		{
			name:       "below the bound, every call is made",
			maxWaiting: 3,
			asks:       []ask{{2, true}, {1, false}},
			wantMade:   []string{"first", "d0", "d1", "s0"},
			wantKept:   []bool{true, true},
		},
		{
			name:       "past the bound, droppable calls are dropped",
			maxWaiting: 2,
			asks:       []ask{{4, true}},
			wantMade:   []string{"first", "d0", "d1"},
			wantKept:   []bool{true, true, false, false},
		},
		{
			name:       "calls that are not droppable are kept past the bound, and count for nothing",
			maxWaiting: 2,
			asks:       []ask{{2, true}, {3, false}, {1, true}, {1, false}},
			wantMade:   []string{"first", "d0", "d1", "s0", "s1", "s2", "s3"},
			wantKept:   []bool{true, true, false},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var drops int
			q := New(tc.maxWaiting, func() { drops++ })
			var mu sync.Mutex
			var made []string
			record := func(name string) func() {
				return func() {
					mu.Lock()
					defer mu.Unlock()
					made = append(made, name)
				}
			}
			entered, release := make(chan struct{}), make(chan struct{})
			q.Enqueue(func() { close(entered); <-release; record("first")() })
			<-entered // the first call is being made: it is not waiting
			var kept []bool
			var droppable, other int
			for _, a := range tc.asks {
				for range a.n {
					if a.droppable {
						kept = append(kept, q.EnqueueDroppable(record(fmt.Sprintf("d%d", droppable))))
						droppable++
					} else {
						q.Enqueue(record(fmt.Sprintf("s%d", other)))
						other++
					}
				}
			}
			close(release)
			q.Wait()
			mu.Lock()
			defer mu.Unlock()
			if diff := cmp.Diff(tc.wantMade, made); diff != "" {
				t.Errorf("calls made (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantKept, kept); diff != "" {
				t.Errorf("EnqueueDroppable kept (-want +got):\n%s", diff)
			}
			wantDropped := 0
			for _, k := range tc.wantKept {
				if !k {
					wantDropped++
				}
			}
			if got := q.Dropped(); got != int64(wantDropped) || drops != wantDropped {
				t.Errorf("Dropped() = %d, onDrop told %d times, want %d", got, drops, wantDropped)
			}
		})
	}
}
