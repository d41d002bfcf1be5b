package share

import "hash/maphash"

// candidateBits is how many bits of a value's hash pick its pair of
// candidate slots: 4,096 pairs, 64 KiB per table.
const candidateBits = 12

// candidates remembers the hashes of values met once. A value enters a
// table of shared values only when its hash is met again while still in
// its pair of slots: values that never repeat (names, IPs, container IDs, a
// Pod's own status fieldsV1) then cost the table nothing and are not kept
// alive by it after their object is gone. A hash goes to the first slot of
// its pair and the one there moves to the second, out of which the next
// goes: two values of one pair that come in turn (one in every object's
// metadata, one in its spec) would push each other out of a single slot
// for ever, and never be shared. A value pushed out before it repeats is
// only shared from its next two sightings on.
type candidates struct {
	slots []uint64
}

// seenBefore reports whether h is in its pair, taking it out if so, and
// puts it there if not. Hash 0 is never reported seen (an empty slot).
func (c *candidates) seenBefore(h uint64) bool {
	if c.slots == nil {
		c.slots = make([]uint64, 2<<candidateBits)
	}
	first := int(h>>(64-candidateBits)) * 2
	pair := c.slots[first : first+2]
	for i, slot := range pair {
		if slot == h && h != 0 {
			pair[i] = 0
			return true
		}
	}
	pair[0], pair[1] = h, pair[0]
	return false
}

// PutBounded sets table[key], first emptying the table if it holds max
// entries: objects keep what they were given, and only later objects stop
// sharing with them, so a table's memory is bounded whatever the input.
// typed's interner of unstructured objects bounds its tables with it too.
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
