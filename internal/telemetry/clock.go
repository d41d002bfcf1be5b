package telemetry

import (
	"reflect"
	"sync/atomic"
	"time"
)

// ringSize is how many watch events an informer remembers the arrival
// of, for the delivery latency: a handler that takes an event more than
// this many events after it arrived is not measured for it.
const ringSize = 4096

// scanAhead is how far past its last match a handler looks for the event
// it is called with: more than the events a watch can leave untaken when
// it stops (the 64 events of the list/watch chain's buffer).
const scanAhead = 128

// Clock remembers when each of the last ringSize watch events
// arrived, in the order the ingest handed them on, which is the order
// client-go hands them to each handler. Each handler keeps its own cursor
// into it (a Cursor), and looks for the object it is called
// with from there: the same object, as the cache holds it, that the ingest
// handed on. Objects from lists, tombstones and resyncs were never stamped
// and are not found; the cursor then stays where it was.
//
// client-go has no such measure: its informer metrics
// (cache.InformerMetricsProvider, which the root's WithInformerName turns
// on) time the handlers' run after an event leaves the FIFO, not the wait
// from the event's arrival to each handler, which is what a controller
// that falls behind feels; the clock is kept for that.
//
// It is lock-free: one goroutine stamps (the watch's, one at a time), any
// number read. An entry is the object's address, which cannot be reused
// for another object while a handler that has not passed the entry may
// still be called with it (the handler's queue holds the object).
type Clock struct {
	telemetry *Telemetry
	base      time.Time
	// timedEvery is the least time between two timed events: at most
	// 50,000 events a second are timed (20 µs, the root package's
	// default), so that the clock reads and histogram observations at the
	// handlers (about 60 ns an event) stay a small part of an ingest's
	// cost at the hundreds of thousands of events a second it can take;
	// below that rate every event is timed.
	timedEvery time.Duration
	// next is the number of stamps so far; entries [next-ringSize,
	// next) are valid.
	next atomic.Uint64
	// ring is allocated at the first stamp.
	ring atomic.Pointer[[ringSize]entry]

	// lastTimed is when the last timed event arrived (a time.Duration);
	// the goroutine of the current watch uses it.
	lastTimed atomic.Int64
}

// entry is one stamped event: the address of its object, and when it
// arrived (0: not timed).
type entry struct {
	object  atomic.Uintptr
	arrived atomic.Int64
}

func newClock(t *Telemetry, timedEvery time.Duration) *Clock {
	return &Clock{telemetry: t, base: time.Now(), timedEvery: timedEvery}
}

// now is the time since the clock's base, on the monotonic clock.
func (c *Clock) now() time.Duration { return time.Since(c.base) }

// arrival is the time a watch event arrives, if it is to be timed, else 0.
// Only the goroutine of the informer's current watch calls it.
func (c *Clock) arrival() time.Duration {
	now := max(c.now(), 1)
	if last := time.Duration(c.lastTimed.Load()); last != 0 && now-last < c.timedEvery {
		return 0
	}
	c.lastTimed.Store(int64(now))
	return now
}

// stamp records that obj, handed on by the ingest, arrived at arrived (0:
// not timed). Only the goroutine of the informer's current watch calls it.
func (c *Clock) stamp(obj any, arrived time.Duration) {
	address := addressOf(obj)
	if address == 0 {
		return
	}
	ring := c.ring.Load()
	if ring == nil {
		ring = new([ringSize]entry)
		c.ring.Store(ring)
	}
	n := c.next.Load()
	entry := &ring[n%ringSize]
	entry.object.Store(address)
	entry.arrived.Store(int64(arrived))
	c.next.Store(n + 1)
}

// Cursor is one handler's place in a Clock. The zero Cursor is the
// start. Only the handler's goroutine uses it.
type Cursor struct {
	clock *Clock
	next  uint64
}

// Cursor returns a new handler's place in the clock; that of a nil Clock
// measures nothing.
func (c *Clock) Cursor() Cursor { return Cursor{clock: c} }

// Delivered observes the delivery latency of obj, which the cursor's
// handler is being called with, if obj was stamped.
func (h *Cursor) Delivered(obj any) {
	if h.clock != nil {
		h.clock.delivered(&h.next, obj)
	}
}

// delivered observes the latency of obj, which a handler whose cursor is
// *cursor is being called with, if it was stamped.
func (c *Clock) delivered(cursor *uint64, obj any) {
	address := addressOf(obj)
	if address == 0 {
		return // a tombstone, or a T that is not a pointer: never stamped
	}
	next := c.next.Load()
	ring := c.ring.Load()
	if next == 0 || ring == nil {
		return
	}
	from := *cursor
	if next > ringSize && from < next-ringSize {
		from = next - ringSize
	}
	end := min(next, from+scanAhead)
	for n := from; n < end; n++ {
		entry := &ring[n%ringSize]
		if entry.object.Load() != address {
			continue
		}
		arrived := time.Duration(entry.arrived.Load())
		if c.next.Load() > n+ringSize {
			return // overwritten while read: not measured
		}
		*cursor = n + 1
		if arrived != 0 {
			c.telemetry.observeLatency((c.now() - arrived).Seconds())
		}
		return
	}
}

// addressOf is the address obj points to; 0 if it is not a pointer.
func addressOf(obj any) uintptr {
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer {
		return 0
	}
	return v.Pointer()
}
