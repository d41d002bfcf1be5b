// Package goid tells which goroutine is running, so that a Factory can
// recognise a call made from one of its own callbacks (an event handler, a
// StateHandler or an ErrorHandler calling Release or Shutdown) and not wait
// for the callback to return, which would never happen.
//
// Go has no goroutine identity on purpose; the only public source of it is
// the first line of runtime.Stack ("goroutine 123 [running]:"). It costs
// about a microsecond, so the library reads it once per callback goroutine
// and once per Release or Shutdown, never per event.
package goid

import (
	"bytes"
	"runtime"
	"strconv"
)

// ID returns the current goroutine's ID, or 0 if it cannot be read.
// Goroutine IDs are never reused within a process.
func ID() uint64 {
	var buf [64]byte
	line := buf[:runtime.Stack(buf[:], false)]
	line = bytes.TrimPrefix(line, []byte("goroutine "))
	if end := bytes.IndexByte(line, ' '); end > 0 {
		line = line[:end]
	}
	id, err := strconv.ParseUint(string(line), 10, 64)
	if err != nil {
		return 0
	}
	return id
}
