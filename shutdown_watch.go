package generic

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

// ErrShutdownWaitsOnCallback is wrapped by the error a Factory's Shutdown
// reports, to the ErrorHandler of an informer, when it has waited
// shutdownReportAfter for the informers to end and that informer's
// StateHandler or ErrorHandler call is still running: the typical cause is
// a callback that called Shutdown itself, which can never return (Shutdown
// waits for the callback, which waits for Shutdown). Test for it with
// errors.Is.
var ErrShutdownWaitsOnCallback = errors.New("generic: Shutdown is waiting on a running StateHandler or ErrorHandler call")

// shutdownReportAfter is how long Shutdown waits for the informers before
// it reports, once per informer, a callback it is waiting on
// (ErrShutdownWaitsOnCallback), and how often it looks again.
const shutdownReportAfter = 5 * time.Second

// watchShutdown reports, while Shutdown waits, each informer whose
// callback Shutdown waits on (ErrShutdownWaitsOnCallback), so that a
// Shutdown called from a callback does not hang in silence. The returned
// function ends the watch and returns when it has ended.
//
// It cannot tell a callback that called Shutdown from one that is only
// slow (that would take the goroutine's identity, which Go does not give),
// so the error says what it sees: Shutdown waits on a running callback.
func (r *Registry) watchShutdown() (stop func()) {
	done := make(chan struct{})
	var watcher sync.WaitGroup
	watcher.Go(func() {
		reported := map[runner]bool{}
		ticker := time.NewTicker(r.shutdownReportAfter)
		defer ticker.Stop()
		for {
			select {
			case <-done:
				return
			case <-ticker.C:
			}
			for _, i := range r.informers.Running() {
				if !reported[i] && i.callbacksRunning() {
					reported[i] = true
					i.reportShutdownBlocked(r.shutdownReportAfter)
				}
			}
		}
	})
	return func() {
		close(done)
		watcher.Wait()
	}
}

// reportShutdownBlocked tells the informer's ErrorHandler that Shutdown
// waits on its running callback, directly: its callbacks goroutine, where
// errors are reported otherwise, is the one that does not return.
func (i *informer[T]) reportShutdownBlocked(waited time.Duration) {
	i.errorHandler(*i.runCtx.Load(), fmt.Errorf("%w of informer %s, for %v or more: a callback must not call Shutdown (cancel Start's context, or Release, instead; see Factory.Shutdown)",
		ErrShutdownWaitsOnCallback, i.gvr, waited))
}

func (i *informer[T]) callbacksRunning() bool { return i.callbacks.Running() }
