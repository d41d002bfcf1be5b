package share

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestCandidatesKeepTwoOfAPair meets hashes that pick the same pair of
// slots: two that come in turn are each seen before at their second
// sighting (a single slot would let them push each other out for ever);
// a third between two sightings pushes the oldest out.
func TestCandidatesKeepTwoOfAPair(t *testing.T) {
	const pairBits = uint64(5) << (64 - candidateBits) // the same top bits: one pair
	a, b, c := pairBits|1, pairBits|2, pairBits|3
	cases := []struct {
		name   string
		hashes []uint64
		want   []bool
	}{
		{"one, again", []uint64{a, a}, []bool{false, true}},
		{"two in turn", []uint64{a, b, a, b}, []bool{false, false, true, true}},
		{"three in turn push the oldest out", []uint64{a, b, c, a}, []bool{false, false, false, false}},
		{"zero is never seen", []uint64{0, 0}, []bool{false, false}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var cand hashCandidates
			got := make([]bool, len(tc.hashes))
			for i, h := range tc.hashes {
				got[i] = cand.seenBefore(h)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("seenBefore (-want +got):\n%s", diff)
			}
		})
	}
}
