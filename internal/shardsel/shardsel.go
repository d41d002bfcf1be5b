// Package shardsel is the shard selection a factory's informers share and
// how it changes (KEP-5866, sharded list and watch): the hash ranges,
// written as metav1.ListOptions.ShardSelector writes them, and the two-step
// reshard, which widens the selection to the union of the current range
// and the next one before it narrows to the next one alone, so that no
// object is ever left out of every replica's cache.
//
// It is also the module's one vocabulary of shards: the index/count type
// (Range) and the bound arithmetic of the hash space (Bound, and its hex
// form as the ShardSelector writes it). The root package, which keeps the
// public Shard, and internal/membership use them rather than their own.
// So it is a leaf: it imports nothing of this module, and it is the one
// package of the module that other internal packages may import
// (docs/architecture.md). The list/watch chain reads the selection
// through State.Selection, a hook the root package hands it.
package shardsel

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/sharding"
)

// Range is range Index of Count contiguous, equal ranges of the 64-bit
// hash space: [Index·2^64/Count, (Index+1)·2^64/Count), rounded down.
// Count 1 is every object. A Range is valid when 1 <= Count and
// 0 <= Index < Count; the root package checks that where shards are
// given.
type Range struct{ Index, Count int }

func (r Range) String() string { return fmt.Sprintf("%d/%d", r.Index, r.Count) }

// all reports whether the range holds every object.
func (r Range) all() bool { return r.Count <= 1 }

// First returns the first hash of r: Bound(Index, Count).
func (r Range) First() uint64 { return Bound(r.Index, r.Count) }

// Last returns the last hash of r, which is in r: one less than the first
// of the next range, and 2^64-1 for the last range of a count.
func (r Range) Last() uint64 { return Bound(r.Index+1, r.Count) - 1 }

// requirement is the range of key's hash space.
func (r Range) requirement(key string) sharding.ShardRangeRequirement {
	return sharding.ShardRangeRequirement{Key: key, Start: HexBound(r.Index, r.Count), End: HexBound(r.Index+1, r.Count)}
}

// end is 2^64, the end of the hash space, as the ShardSelector writes it.
const end = "0x10000000000000000"

// Bound is the lower bound of range i of n, for 0 <= i <= n: i·2^64/n,
// rounded down, modulo 2^64, so 0 for i = n (2^64, the end of the hash
// space; Range.Last reads it so). HexBound writes it as the ShardSelector
// does.
func Bound(i, n int) uint64 {
	if i >= n {
		return 0
	}
	quotient, _ := bits.Div64(uint64(i), 0, uint64(n)) // (i·2^64)/n; i < n, so it fits
	return quotient
}

// HexBound is Bound as the ShardSelector writes it: 16 lowercase hex
// digits with a 0x prefix; 2^64 (0x10000000000000000) for i = n.
func HexBound(i, n int) string {
	if i >= n {
		return end
	}
	return Hex(Bound(i, n))
}

// Hex writes hash h as the ShardSelector writes a bound: 16 lowercase hex
// digits with a 0x prefix.
func Hex(h uint64) string { return fmt.Sprintf("0x%016x", h) }

// HexAfter writes the bound just past hash last, the end of a range whose
// last hash is last: Hex(last+1), or 2^64 (0x10000000000000000) for
// last = 2^64-1.
func HexAfter(last uint64) string {
	if last == math.MaxUint64 {
		return end
	}
	return Hex(last + 1)
}

// State is the range the informers that share it select, and how it
// changes. Each step of a reshard that changes the selection bumps the
// generation and closes the changed channel, which makes every watch made
// at an older generation end (the list/watch chain's shard filter), so
// that the reflector relists with the new selection. It is safe for
// concurrent use.
type State struct {
	mu      sync.Mutex
	current Range
	// widened are the ranges the current one is being widened to, in the
	// order they were added: one for a reshard the caller runs (Widen),
	// more when the replicas' membership changes again before a reshard
	// is done (WidenAlso). Nil when no reshard is under way.
	widened    []Range
	generation uint64
	changed    chan struct{}
}

// New returns the State of range r.
func New(r Range) *State {
	return &State{current: r, changed: make(chan struct{})}
}

// Selection returns the selector of key's hash space to request now (nil:
// every object), the generation it has, and a channel closed when it
// changes: the shape of the list/watch chain's Selection hook.
func (s *State) Selection(key string) (sharding.Selector, uint64, <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ranges := append([]Range{s.current}, s.widened...)
	var reqs []sharding.ShardRangeRequirement
	for _, r := range ranges {
		if r.all() {
			return nil, s.generation, s.changed
		}
		reqs = append(reqs, r.requirement(key))
	}
	return sharding.NewSelector(reqs...), s.generation, s.changed
}

// Ranges returns the range selected, and those it is being widened to
// (nil if none), the last added last.
func (s *State) Ranges() (current Range, widened []Range) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.current, slices.Clone(s.widened)
}

// Widen selects the union of the current range and next, and returns the
// generation that selection has. It changes nothing when next is selected
// already; it is an error while a widening to another range is under way
// (see WidenAlso).
func (s *State) Widen(next Range) (uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.selectsLocked(next) {
		return s.generation, nil
	}
	if len(s.widened) > 0 {
		last := s.widened[len(s.widened)-1]
		return 0, fmt.Errorf("generic: resharding to %v has begun; finish it (Reshard(%d, %d)) before widening to %v", last, last.Index, last.Count, next)
	}
	return s.addLocked(next), nil
}

// WidenAlso selects the union of what is selected and next, whatever
// widening is under way, and returns the generation that selection has:
// for replicas whose membership changed again before they narrowed, which
// must keep every range they widened to until a later view is settled.
func (s *State) WidenAlso(next Range) uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.selectsLocked(next) {
		return s.generation
	}
	return s.addLocked(next)
}

func (s *State) selectsLocked(r Range) bool {
	return s.current == r || slices.Contains(s.widened, r)
}

func (s *State) addLocked(r Range) uint64 {
	s.widened = append(s.widened, r)
	return s.bumpLocked()
}

// Narrow selects next alone and returns the generation that selection
// has. It changes nothing when that is already the selection.
func (s *State) Narrow(next Range) uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.current == next && len(s.widened) == 0 {
		return s.generation
	}
	s.current, s.widened = next, nil
	return s.bumpLocked()
}

func (s *State) bumpLocked() uint64 {
	s.generation++
	close(s.changed)
	s.changed = make(chan struct{})
	return s.generation
}
