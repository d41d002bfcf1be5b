// Package callbacks runs an informer's user callbacks (its StateHandler
// and ErrorHandler calls) one at a time, in the order they were asked
// for, on a goroutine of its own: never on the goroutine that asked, which
// may hold a lock (an index function holds the cache's) or be one the
// informer's Run waits for.
//
// Calls that may be dropped (the ErrorHandler's reports) are bounded: past
// a number of them waiting, more are dropped and counted, so that a
// callback that is slow, or blocked, under a flood of errors costs a
// bounded amount of memory. Other calls (the StateHandler's) are always
// kept; they come one per change of State.
//
// It imports nothing of this module.
package callbacks

import (
	"sync"
	"sync/atomic"

	"k8s.io/utils/buffer"
)

// Queue is an ordered queue of calls, drained by at most one goroutine at
// a time, started when a call is asked for and ended when none is left.
// The zero Queue is not usable; call New. It is safe for concurrent use.
type Queue struct {
	mu    sync.Mutex
	calls *buffer.TypedRingGrowing[call]
	// waiting counts the droppable calls in calls; maxWaiting bounds it.
	waiting, maxWaiting int
	// dropped counts the droppable calls dropped; onDrop is told of each,
	// without q.mu held.
	dropped atomic.Int64
	onDrop  func()
	// draining is whether a drain goroutine takes the calls.
	draining bool
	// running is whether a call has been taken and has not returned.
	running bool
	// drained is closed by the drain goroutine started last, as its last
	// act (see end); nil before the first.
	drained chan struct{}
}

// call is a call asked for, and whether it may be dropped.
type call struct {
	fn        func()
	droppable bool
}

// New returns an empty Queue that keeps at most maxWaiting droppable calls
// waiting (asked for and not yet taken: the one being made is not
// waiting), at least 1, and tells onDrop, if not nil, of each droppable
// call it drops, from the goroutine that asked for it.
func New(maxWaiting int, onDrop func()) *Queue {
	return &Queue{
		calls:      buffer.NewTypedRingGrowing[call](buffer.RingGrowingOptions{InitialSize: 4}),
		maxWaiting: max(maxWaiting, 1),
		onDrop:     onDrop,
	}
}

// Enqueue asks for fn to be made after every call asked for before it. It
// is never dropped.
func (q *Queue) Enqueue(fn func()) { q.enqueue(call{fn: fn}) }

// EnqueueDroppable asks for fn to be made after every call asked for
// before it, unless maxWaiting droppable calls are waiting already: then
// fn is dropped, counted (Dropped) and onDrop told, and EnqueueDroppable
// returns false.
func (q *Queue) EnqueueDroppable(fn func()) bool {
	if q.enqueue(call{fn: fn, droppable: true}) {
		return true
	}
	q.dropped.Add(1)
	if q.onDrop != nil {
		q.onDrop()
	}
	return false
}

// enqueue adds c unless it is droppable and maxWaiting droppable calls are
// waiting; it reports whether it added c.
func (q *Queue) enqueue(c call) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if c.droppable {
		if q.waiting >= q.maxWaiting {
			return false
		}
		q.waiting++
	}
	q.calls.WriteOne(c)
	if !q.draining {
		q.startDrain()
	}
	return true
}

// Dropped returns how many droppable calls were dropped so far.
func (q *Queue) Dropped() int64 { return q.dropped.Load() }

// startDrain starts a drain goroutine; q.mu is held.
func (q *Queue) startDrain() {
	drained := make(chan struct{})
	q.draining, q.drained = true, drained
	go q.drain(drained)
}

func (q *Queue) drain(drained chan struct{}) {
	defer q.end(drained)
	for {
		q.mu.Lock()
		c, ok := q.calls.ReadOne()
		if !ok {
			q.draining = false
			q.mu.Unlock()
			return
		}
		if c.droppable {
			q.waiting--
		}
		q.running = true
		q.mu.Unlock()
		c.fn()
		q.mu.Lock()
		q.running = false
		q.mu.Unlock()
	}
}

// Running reports whether a call is being made at this instant: taken from
// the queue and not returned. A Wait that has not returned for a while
// while Running stays true waits on a call that does not return.
func (q *Queue) Running() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.running
}

// end is a drain goroutine's way out, also when a call ends the goroutine
// (runtime.Goexit, as t.FailNow does): the calls left, if any, go to a new
// drain goroutine; closing drained is its last act, so that Wait returns
// only when the goroutine has nothing left to do.
func (q *Queue) end(drained chan struct{}) {
	q.mu.Lock()
	q.running = false // also after a call that ended the goroutine
	if q.draining && q.drained == drained {
		if q.calls.Len() > 0 {
			q.startDrain()
		} else {
			q.draining = false
		}
	}
	q.mu.Unlock()
	close(drained)
}

// Wait returns when every call asked for so far has returned (and those
// they asked for in turn), and the goroutine that made them has closed
// its drained channel: it has then only its return left. A call must not
// Wait for its own Queue: that wait would never end.
func (q *Queue) Wait() {
	for {
		q.mu.Lock()
		drained := q.drained
		q.mu.Unlock()
		if drained == nil {
			return
		}
		<-drained
		q.mu.Lock()
		last := q.drained == drained
		q.mu.Unlock()
		if last {
			return
		}
	}
}
