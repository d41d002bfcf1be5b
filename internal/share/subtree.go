package share

import (
	"encoding/binary"
	"hash/maphash"
	"math"
	"reflect"
	"slices"
	"unsafe"
)

// maxSharedSubtrees is how many distinct maps and lists an Interner with
// EqualSubtrees holds: a key of a few dozen bytes each (strings longer
// than maxInternedLength are written by address, see appendNodeString),
// a few MiB at most.
const maxSharedSubtrees = 1 << 15

// canonical returns the shared map or list equal to node, which a walk has
// just interned: its strings interned, and each map and list in it
// canonical already, or one of its own. It is hash-consing, bottom up: a
// node's key (treeKeys.ofNode) names its maps and lists by their
// addresses, so two nodes have one key exactly when their entries are
// equal and their maps and lists are the same ones. A node met for the
// first time is only a candidate (hashCandidates, as strings are), and
// becomes the shared one when met again: nodes that never repeat (a Pod's
// metadata, status, its containers that mount its own token volume) cost
// the table nothing. A node holding a value of another type than JSON's
// is never shared, nor is its parent.
//
// A key names a map or list by its address, not by what holds it alive:
// that is sound because a node enters the table only with its children,
// which it holds, so no address in a key of the table is freed while the
// key is there (the table is emptied whole when full, see PutBounded).
func (w walk) canonical(node any) any {
	in := w.in
	key, ok := in.treeKeys.ofNode(node)
	if !ok {
		return node
	}
	if shared, ok := in.subtrees[string(key)]; ok {
		return shared
	}
	if in.subtreeCandidates.seenBefore(maphash.Bytes(in.seed, key)) {
		PutBounded(in.subtrees, in.maxSubtrees, string(key), node)
	}
	return node
}

// ofNode writes node, a map or a list, by its entries (a map's in the order
// of their keys), each map or list among them by its address and length,
// and returns the key, valid until the next call of a treeKeys method. ok
// is false for a node of another type, a nil one, or one holding a value
// of another type than JSON's (string, int64, float64, bool, nil, maps
// and lists) or a nil map or list.
func (k *treeKeys) ofNode(node any) (key []byte, ok bool) {
	if cap(k.buf) > maxTreeKeyBuffer {
		k.buf = nil
	}
	k.buf = k.buf[:0]
	switch n := node.(type) {
	case map[string]any:
		return k.buf, n != nil && k.appendEntries(n)
	case []any:
		if n == nil {
			return nil, false
		}
		k.buf = append(k.buf, 'l')
		k.buf = binary.AppendUvarint(k.buf, uint64(len(n)))
		for _, item := range n {
			if !k.appendRef(item) {
				return nil, false
			}
		}
		return k.buf, true
	}
	return nil, false
}

func (k *treeKeys) appendEntries(m map[string]any) bool {
	start := len(k.keys)
	for key := range m {
		k.keys = append(k.keys, key)
	}
	end := len(k.keys)
	slices.Sort(k.keys[start:end])
	k.buf = append(k.buf, 'm')
	k.buf = binary.AppendUvarint(k.buf, uint64(len(m)))
	ok := true
	for i := start; i < end && ok; i++ {
		k.buf = k.appendNodeString(k.keys[i])
		ok = k.appendRef(m[k.keys[i]])
	}
	clear(k.keys[start:end]) // keep no object's strings alive
	k.keys = k.keys[:start]
	return ok
}

// appendRef writes one value of a node: a tag, then the value, or a map's
// or a list's address (and a list's length).
func (k *treeKeys) appendRef(value any) bool {
	switch v := value.(type) {
	case string:
		k.buf = k.appendNodeString(v)
	case map[string]any:
		if v == nil {
			return false
		}
		k.buf = binary.LittleEndian.AppendUint64(append(k.buf, 'M'), uint64(uintptr(reflect.ValueOf(v).UnsafePointer())))
	case []any:
		if v == nil {
			return false
		}
		k.buf = binary.LittleEndian.AppendUint64(append(k.buf, 'L'), uint64(uintptr(unsafe.Pointer(unsafe.SliceData(v)))))
		k.buf = binary.AppendUvarint(k.buf, uint64(len(v)))
	case int64:
		k.buf = binary.LittleEndian.AppendUint64(append(k.buf, 'i'), uint64(v))
	case float64:
		k.buf = binary.LittleEndian.AppendUint64(append(k.buf, 'f'), math.Float64bits(v))
	case bool:
		tag := byte('F')
		if v {
			tag = 'T'
		}
		k.buf = append(k.buf, tag)
	case nil:
		k.buf = append(k.buf, 'z')
	default:
		return false
	}
	return true
}

// appendNodeString writes a string of a node: one up to
// maxInternedLength long by its bytes ('s'); a longer one by its address
// and length ('S'), as maps and lists are, so that a table key holds
// short strings only, whatever the node holds (a ConfigMap's 100 KiB
// value met twice, across a relist, would otherwise be copied into the
// table in full). Two equal long strings of two nodes are so told apart:
// such nodes are seldom equal but for those that share the string.
func (k *treeKeys) appendNodeString(s string) []byte {
	if len(s) <= maxInternedLength {
		return appendString(append(k.buf, 's'), s)
	}
	k.buf = binary.LittleEndian.AppendUint64(append(k.buf, 'S'), uint64(uintptr(unsafe.Pointer(unsafe.StringData(s)))))
	return binary.AppendUvarint(k.buf, uint64(len(s)))
}

// appendString writes s's length, then s.
func appendString(buf []byte, s string) []byte {
	return append(binary.AppendUvarint(buf, uint64(len(s))), s...)
}
