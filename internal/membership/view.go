package membership

import (
	"fmt"
	"hash/fnv"
	"slices"

	"github.com/generic-informers/generic/internal/shardsel"
)

// IntervalOf returns the hashes of shard r (internal/shardsel's bounds).
func IntervalOf(r shardsel.Range) Interval { return Interval{Lo: r.First(), Last: r.Last()} }

// Interval is the hashes Lo to Last, both in; the zero Interval with Empty
// is none.
type Interval struct {
	Lo, Last uint64
	Empty    bool
}

// Contains reports whether hash h is in i.
func (i Interval) Contains(h uint64) bool { return !i.Empty && i.Lo <= h && h <= i.Last }

// Intersect returns the hashes in both i and j.
func (i Interval) Intersect(j Interval) Interval {
	if i.Empty || j.Empty || i.Last < j.Lo || j.Last < i.Lo {
		return Interval{Empty: true}
	}
	return Interval{Lo: max(i.Lo, j.Lo), Last: min(i.Last, j.Last)}
}

func (i Interval) String() string {
	if i.Empty {
		return "none"
	}
	return fmt.Sprintf("[%#x, %#x]", i.Lo, i.Last)
}

// View is a membership: the identities of the live replicas, each once,
// sorted. Its order is the shards': the replica at position i holds shard
// i of len(View).
type View []string

// ViewOf returns the view of identities, in any order, repeated or not.
func ViewOf(identities []string) View {
	v := slices.Clone(identities)
	slices.Sort(v)
	return slices.Compact(v)
}

// ShardOf returns the shard of identity in v, false if v does not hold it.
func (v View) ShardOf(identity string) (shardsel.Range, bool) {
	i, ok := slices.BinarySearch(v, identity)
	if !ok {
		return shardsel.Range{}, false
	}
	return shardsel.Range{Index: i, Count: len(v)}, true
}

// Fingerprint names v in an Announcement: its count, and the 64-bit
// FNV-1a hash of its identities, each followed by a NUL (which no
// identity holds: a Lease's name, a DNS subdomain), in hex: "3-9a2b...".
// Two views alike in count and hash are taken for one: the chance that
// two different views a controller's replicas meet collide is about
// 2^-64 for each pair.
func (v View) Fingerprint() string {
	h := fnv.New64a()
	for _, identity := range v {
		h.Write([]byte(identity))
		h.Write([]byte{0})
	}
	return fmt.Sprintf("%d-%016x", len(v), h.Sum64())
}
