package objectedit

// What the edits rely on of the layout of Go's maps (internal/runtime/maps,
// Go 1.24 and later), in one place.

// Entries is the most entries a Go map holds in its small form: one group
// of eight slots behind the map's header, about 340 bytes for a
// map[string]any. With more it is a table with a directory and groups for
// sixteen, about twice the memory; a map never shrinks back, and a full
// small map turns into a table on any assignment, even to a key it holds
// (the runtime checks for room before it looks for the key).
const Entries = 8

// Set sets m[key] to value. If m is a full small map (Entries entries)
// that holds key, set in place it would turn into a table for good, about
// 330 bytes more: Set then leaves m as it was and returns Remake's map of
// m, key set to value, and remade true. Otherwise it sets m in place and
// returns m. The caller stores the map returned where m was. m must not be
// nil.
func Set(m map[string]any, key string, value any) (out map[string]any, remade bool) {
	if _, held := m[key]; !held || len(m) != Entries {
		m[key] = value
		return m, false
	}
	return remake(m, key, value, true), true
}

// Remake returns a new map of m's entries, made for their number: small
// if they are Entries or fewer, whatever m's own form (a map that shrank
// keeps its table). first's entry, if m holds it, is added first, into
// the new map's first slot (see internal/share's Interner); each entry is added
// once, as a second assignment to a full small map would turn it into a
// table.
func Remake(m map[string]any, first string) map[string]any {
	value, held := m[first]
	return remake(m, first, value, held)
}

// remake is Remake with first's entry set to value if withFirst.
func remake(m map[string]any, first string, value any, withFirst bool) map[string]any {
	out := make(map[string]any, len(m))
	if withFirst {
		out[first] = value
	}
	for k, v := range m {
		if k != first {
			out[k] = v
		}
	}
	return out
}
