package share

import (
	"encoding/binary"
	"slices"
)

// treeKeys writes decoded JSON trees (a labels map, a fieldsV1 tree) as
// keys of the interner's tables of shared trees: equal trees are written
// alike, different trees differently. The bytes go into a buffer it
// reuses, and a Go map looked up with string(bytes) does not copy them, so
// finding a tree that is shared already allocates nothing; only a tree
// seen for the first time costs its key as a string. (Written as JSON text
// by encoding/json before, each fieldsV1 tree cost about fifteen
// allocations, and the walk of UnstructuredFor's JSON decoder a fifth of
// its time went to it.)
//
// The form: a map is its number of entries, then, in the order of their
// keys, each key (its length, then its bytes) followed by its value; a
// value is a tag followed by its content: 'm' then a map, or 's' then a
// string (its length, then its bytes). Lengths and numbers are uvarints.
// As every part starts with what it is and how long, no two trees are
// written alike.
//
// A treeKeys is not safe for concurrent use: the interner's lock guards
// its own.
type treeKeys struct {
	// buf is dropped when a tree left it larger than maxTreeKeyBuffer
	// (one object's managedFields can be large), not kept for the
	// Interner's life.
	buf []byte
	// keys holds the sorted keys of the maps being written, each map's
	// after its parent's.
	keys []string
}

// maxTreeKeyBuffer is the largest buffer a treeKeys keeps between trees.
const maxTreeKeyBuffer = 64 << 10

// of writes tree and returns its key, valid until the next call. ok is
// false if tree holds a value that is neither a map nor a string (a labels
// map with a number: the interner does not share those), or a nil map
// (which would be written as an empty one).
func (k *treeKeys) of(tree map[string]any) (key []byte, ok bool) {
	if cap(k.buf) > maxTreeKeyBuffer {
		k.buf = nil
	}
	k.buf = k.buf[:0]
	ok = k.appendMap(tree)
	return k.buf, ok
}

func (k *treeKeys) appendMap(m map[string]any) bool {
	if m == nil {
		return false
	}
	start := len(k.keys)
	for key := range m {
		k.keys = append(k.keys, key)
	}
	end := len(k.keys)
	slices.Sort(k.keys[start:end])
	k.buf = binary.AppendUvarint(k.buf, uint64(len(m)))
	ok := true
	for i := start; i < end && ok; i++ {
		key := k.keys[i]
		k.buf = appendString(k.buf, key)
		ok = k.appendValue(m[key])
	}
	clear(k.keys[start:end]) // keep no object's strings alive
	k.keys = k.keys[:start]
	return ok
}

func (k *treeKeys) appendValue(value any) bool {
	switch v := value.(type) {
	case map[string]any:
		k.buf = append(k.buf, 'm')
		return k.appendMap(v)
	case string:
		k.buf = appendString(append(k.buf, 's'), v)
		return true
	}
	return false
}
