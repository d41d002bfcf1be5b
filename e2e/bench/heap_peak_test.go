package bench

import (
	"runtime/metrics"
	"time"
)

// heapObjectsMetric is the heap runtime.MemStats.HeapAlloc is, in
// runtime/metrics' terms (live objects, and dead ones not yet swept), which
// it reads without stopping the world as ReadMemStats does.
const heapObjectsMetric = "/memory/classes/heap/objects:bytes"

// peakSampleInterval is how often a peakSampler reads the heap. A sync
// allocates a few hundred MB a second at most here: between two samples
// the heap grows by well under 1 MB, against peaks of tens to hundreds.
const peakSampleInterval = time.Millisecond

// peakSampler samples the process's heap (heapObjectsMetric) every
// peakSampleInterval from a goroutine of its own, until stopped, and keeps
// the highest sample: the peak heap of what ran meanwhile, garbage not yet
// collected included, as the garbage collector's pacing lets it grow.
type peakSampler struct {
	stop chan struct{}
	done chan uint64
}

// samplePeak starts a peakSampler.
func samplePeak() *peakSampler {
	s := &peakSampler{stop: make(chan struct{}), done: make(chan uint64, 1)}
	go s.run()
	return s
}

func (s *peakSampler) run() {
	sample := []metrics.Sample{{Name: heapObjectsMetric}}
	read := func() uint64 {
		metrics.Read(sample)
		return sample[0].Value.Uint64()
	}
	ticker := time.NewTicker(peakSampleInterval)
	defer ticker.Stop()
	peak := read()
	for {
		select {
		case <-ticker.C:
			peak = max(peak, read())
		case <-s.stop:
			s.done <- max(peak, read())
			return
		}
	}
}

// Stop stops the sampler and returns the highest heap it sampled, in
// bytes, the heap as it stops among them.
func (s *peakSampler) Stop() uint64 {
	close(s.stop)
	return <-s.done
}
