package generic

// TimeEveryEvent makes informers made from now on time every watch event
// for the delivery latency, however fast they come, until the returned
// function restores the sampling. Tests that use it must not run in
// parallel with others that measure latency.
func TimeEveryEvent() (restore func()) {
	saved := timedEvery
	timedEvery = 0
	return func() { timedEvery = saved }
}
