// Package smallmap holds what the library relies on of the layout of Go's
// maps (internal/runtime/maps, Go 1.24 and later), in one place.
package smallmap

// Entries is the most entries a Go map holds in its small form: one group
// of eight slots behind the map's header, about 340 bytes for a
// map[string]any. With more it is a table with a directory and groups for
// sixteen, about twice the memory; a map never shrinks back, and a full
// small map turns into a table on any assignment, even to a key it holds
// (the runtime checks for room before it looks for the key).
const Entries = 8

// Set sets m[key] to value. If m is a full small map (Entries entries)
// that holds key, set in place it would turn into a table for good, about
// 330 bytes more: Set then leaves m as it was and returns a new small map
// of m's entries with key set to value, added first (in the first slot:
// see typed's interner), and remade true. Otherwise it sets m in place and
// returns m. The caller stores the map returned where m was. m must not be
// nil.
func Set(m map[string]any, key string, value any) (out map[string]any, remade bool) {
	if _, held := m[key]; !held || len(m) != Entries {
		m[key] = value
		return m, false
	}
	out = make(map[string]any, len(m))
	out[key] = value
	for k, v := range m {
		if k != key {
			out[k] = v
		}
	}
	return out, true
}
