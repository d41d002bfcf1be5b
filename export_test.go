package generic

import "time"

// TimeEveryEvent makes informers made from now on time every watch event
// for the delivery latency, however fast they come, until the returned
// function restores the sampling. Tests that use it must not run in
// parallel with others that measure latency.
func TimeEveryEvent() (restore func()) {
	saved := timedEvery
	timedEvery = 0
	return func() { timedEvery = saved }
}

// SetShutdownReportAfter sets how long f's Shutdown waits before it
// reports a callback it waits on (ErrShutdownWaitsOnCallback).
func SetShutdownReportAfter[T Object](f *Factory[T], after time.Duration) {
	f.shutdownReportAfter = after
}
