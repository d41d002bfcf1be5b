package listwatch

import (
	"math"

	"k8s.io/client-go/tools/cache"
)

// encodedSizes keeps the encoded size of each object of an objectSet, keyed
// as the set keys the object, and their sum, for an informer that measures
// it (Config.EncodedSize). Each size is taken once, when its object is set,
// and taken back as it was when the object goes: the sum follows the set
// exactly, even if an object were changed while held (a caller that writes
// to a cached object), and reading it costs nothing more than a field.
// With no size function it keeps nothing, and costs nothing.
type encodedSizes[T Stored] struct {
	size     func(T) int
	of       map[uint64]uint32
	overflow map[cache.ObjectName]uint32
	total    int64
}

func newEncodedSizes[T Stored](size func(T) int, n int) encodedSizes[T] {
	if size == nil {
		return encodedSizes[T]{}
	}
	return encodedSizes[T]{size: size, of: make(map[uint64]uint32, n)}
}

// sizeOf is t's size, within [0, MaxUint32].
func (e *encodedSizes[T]) sizeOf(t T) uint32 {
	return uint32(min(max(e.size(t), 0), math.MaxUint32)) //nolint:gosec // clamped
}

// put keeps the size of t, which the set holds under hash h.
func (e *encodedSizes[T]) put(h uint64, t T) {
	if e.size == nil {
		return
	}
	n := e.sizeOf(t)
	e.total += int64(n) - int64(e.of[h])
	e.of[h] = n
}

// drop forgets the size of the object held under hash h.
func (e *encodedSizes[T]) drop(h uint64) {
	if e.size == nil {
		return
	}
	e.total -= int64(e.of[h])
	delete(e.of, h)
}

// putOverflow keeps the size of t, which the set holds in its overflow
// under key.
func (e *encodedSizes[T]) putOverflow(key cache.ObjectName, t T) {
	if e.size == nil {
		return
	}
	if e.overflow == nil {
		e.overflow = map[cache.ObjectName]uint32{}
	}
	n := e.sizeOf(t)
	e.total += int64(n) - int64(e.overflow[key])
	e.overflow[key] = n
}

// dropOverflow forgets the size of the object held in the overflow under
// key, if any.
func (e *encodedSizes[T]) dropOverflow(key cache.ObjectName) {
	if e.size == nil {
		return
	}
	e.total -= int64(e.overflow[key])
	delete(e.overflow, key)
}
