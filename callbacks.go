package generic

import (
	"sync"

	"github.com/generic-informers/generic/internal/goid"
)

// callbacks runs an informer's StateHandler and ErrorHandler calls one at a
// time, in the order they were asked for, on a goroutine of its own that
// nothing else of the informer waits for while a call runs. So a callback
// may call back into the informer and its Factory: Release and Shutdown
// recognise its goroutine (see callbackGoroutines) and do not wait for the
// call they were made from.
type callbacks struct {
	goroutines *callbackGoroutines

	mu    sync.Mutex
	queue []func()
	// draining is whether a drain goroutine takes the calls of queue.
	draining bool
	// drained is closed by the drain goroutine started last, as its last
	// act (see end); nil before the first.
	drained chan struct{}
}

func newCallbacks(goroutines *callbackGoroutines) *callbacks {
	return &callbacks{goroutines: goroutines}
}

// enqueue asks for call to be made after every call asked for before it.
func (c *callbacks) enqueue(call func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.queue = append(c.queue, call)
	if !c.draining {
		c.startDrain()
	}
}

// startDrain starts a drain goroutine; c.mu is held.
func (c *callbacks) startDrain() {
	drained := make(chan struct{})
	c.draining, c.drained = true, drained
	go c.drain(drained)
}

func (c *callbacks) drain(drained chan struct{}) {
	id := goid.ID()
	c.goroutines.add(id)
	defer c.end(id, drained)
	for {
		c.mu.Lock()
		if len(c.queue) == 0 {
			c.draining = false
			c.mu.Unlock()
			return
		}
		call := c.queue[0]
		c.queue[0] = nil
		c.queue = c.queue[1:]
		c.mu.Unlock()
		call()
	}
}

// end is a drain goroutine's way out, also when a callback ends the
// goroutine (runtime.Goexit, as t.FailNow does): the calls left, if any,
// go to a new drain goroutine; closing drained is its last act, so that
// wait returns only when the goroutine has nothing left to do.
func (c *callbacks) end(id uint64, drained chan struct{}) {
	c.goroutines.remove(id)
	c.mu.Lock()
	if c.draining && c.drained == drained {
		if len(c.queue) > 0 {
			c.startDrain()
		} else {
			c.draining = false
		}
	}
	c.mu.Unlock()
	close(drained)
}

// wait returns when every call asked for so far has returned (and those
// they asked for in turn), and the goroutine that made them has closed
// drained: it has then only its return left.
func (c *callbacks) wait() {
	for {
		c.mu.Lock()
		drained := c.drained
		c.mu.Unlock()
		if drained == nil {
			return
		}
		<-drained
		c.mu.Lock()
		last := c.drained == drained
		c.mu.Unlock()
		if last {
			return
		}
	}
}

// callbackGoroutines records the goroutines that run an informer's user
// callbacks: its callbacks' drain goroutines and the goroutines client-go
// gives each event handler. Goroutine IDs are never reused, so entries of
// goroutines that ended are harmless.
type callbackGoroutines struct{ ids sync.Map }

func (g *callbackGoroutines) add(id uint64) {
	if id != 0 {
		g.ids.Store(id, struct{}{})
	}
}

func (g *callbackGoroutines) remove(id uint64) { g.ids.Delete(id) }

// has reports whether goroutine id runs callbacks of the informer.
func (g *callbackGoroutines) has(id uint64) bool {
	_, ok := g.ids.Load(id)
	return ok
}
