package share

import "hash/maphash"

// candidateBits is how many bits of a value's hash pick its pair of
// candidate slots: 4,096 pairs, 64 KiB per table of hashes.
const candidateBits = 12

// candidates remembers values met once (their hashes, or the values
// themselves), in pairs of slots. A value enters a table of shared values
// only when it is met again while still in its pair of slots: values that
// never repeat (names, IPs, container IDs, a Pod's own status fieldsV1)
// then cost the table nothing and are not kept alive by it after their
// object is gone. A value goes to the first slot of its pair and the one
// there moves to the second, out of which the next goes: two values of
// one pair that come in turn (one in every object's metadata, one in its
// spec) would push each other out of a single slot for ever, and never be
// shared. A value pushed out before it repeats is only shared from its
// next two sightings on. The zero V marks an empty slot.
type candidates[V comparable] struct {
	// bits is how many bits pick a pair; candidateBits if 0.
	bits  int
	slots []V
}

// metBefore reports whether v is in the pair its hash h picks, taking it
// out and returning the copy that was there if so, and puts it there if
// not. The zero V is never reported met.
func (c *candidates[V]) metBefore(h uint64, v V) (V, bool) {
	var zero V
	bits := c.bits
	if bits == 0 {
		bits = candidateBits
	}
	if c.slots == nil {
		// Made at the first value: a table that never sees one costs
		// nothing.
		c.slots = make([]V, 2<<bits)
	}
	first := int(h>>(64-bits)) * 2
	pair := c.slots[first : first+2]
	for i, slot := range pair {
		if slot == v && v != zero {
			pair[i] = zero
			return slot, true
		}
	}
	pair[0], pair[1] = v, pair[0]
	return zero, false
}

// hashCandidates are the candidates of the Sharer's tables, by hash.
type hashCandidates struct{ candidates[uint64] }

// seenBefore reports whether h was met before (metBefore). Hash 0 is never
// reported seen.
func (c *hashCandidates) seenBefore(h uint64) bool {
	_, ok := c.metBefore(h, h)
	return ok
}

// PutBounded sets table[key], first emptying the table if it holds max
// entries: objects keep what they were given, and only later objects stop
// sharing with them, so a table's memory is bounded whatever the input.
// The Interner of unstructured objects bounds its tables with it too.
func PutBounded[K comparable, V any](table map[K]V, max int, key K, value V) {
	if len(table) >= max {
		clear(table)
	}
	table[key] = value
}

// hashString is the hash of the tables: maphash, with the Sharer's seed.
func hashString(seed maphash.Seed, s string) uint64 {
	return maphash.String(seed, s)
}
