package bench

import (
	"runtime"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/generic-informers/generic/internal/heaptest"
)

// TestPeakSampler: a peakSampler's peak counts the heap held as it stops,
// in bytes of heap objects (what heaptest.Live measures).
func TestPeakSampler(t *testing.T) {
	tests := []struct {
		name string
		held int
	}{
		{"nothing allocated", 0},
		{"64 MiB held", 64 << 20},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := heaptest.Live()
			sampler := samplePeak()
			held := make([]byte, tc.held)
			peak := sampler.Stop()
			runtime.KeepAlive(held)
			if diff := cmp.Diff(true, peak >= before+uint64(tc.held)); diff != "" {
				t.Errorf("peak %d B, live heap before %d B, held %d B: peak ≥ before + held (-want +got):\n%s", peak, before, tc.held, diff)
			}
		})
	}
}
