package callbacks

import (
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
			q := New()
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
