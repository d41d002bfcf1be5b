package share

import (
	"hash/maphash"
	"maps"
	"math/bits"
	"unsafe"

	"k8s.io/apimachinery/pkg/api/resource"
)

// mapShape tells a shared map of strings from one of quantities.
type mapShape uint8

const (
	stringValues mapShape = iota + 1
	quantityValues
)

// sharedMap is a map kept to be shared: its shape, and the map itself (a Go
// map value is one pointer).
type sharedMap struct {
	shape mapShape
	m     unsafe.Pointer
}

// Maps of any Go type whose keys and values are of kind string
// (map[string]string, map[Protocol]string, ...) are read and written as
// map[string]string, and those of kind-string keys and resource.Quantity
// values (ResourceList) as map[string]resource.Quantity: a map's memory
// and its hashing depend only on the kinds of its key and value.

// stringMap shares the map of strings at p, or with sharing of maps off
// interns its values in place.
func (s *Sharer) stringMap(p unsafe.Pointer) {
	m := *(*map[string]string)(p)
	if len(m) == 0 {
		return
	}
	if !s.maps {
		s.internValues(m)
		return
	}
	h, size := s.hashStrings(m)
	if size > MaxMapBytes {
		s.internValues(m)
		return
	}
	if shared, ok := s.sharedMaps[h]; ok && shared.shape == stringValues {
		if sm := *(*map[string]string)(unsafe.Pointer(&shared.m)); maps.Equal(sm, m) {
			*(*map[string]string)(p) = sm
			return
		}
	}
	s.internValues(m)
	if s.mapCandidates.seenBefore(h) {
		PutBounded(s.sharedMaps, MaxMaps, h, sharedMap{stringValues, *(*unsafe.Pointer)(p)})
	}
}

// internValues replaces the values of m with their shared copies (writing
// to a key that is there does not grow a map). Keys stay: replacing one
// means a delete and an insert.
func (s *Sharer) internValues(m map[string]string) {
	for k, v := range m {
		if shared := s.string(v); unsafe.StringData(shared) != unsafe.StringData(v) {
			m[k] = shared
		}
	}
}

// hashStrings returns the hash of m's entries, whatever their order, and
// the bytes of its keys and values.
func (s *Sharer) hashStrings(m map[string]string) (uint64, int) {
	var sum uint64
	size := 0
	for k, v := range m {
		sum += entryHash(hashString(s.seed, k), hashString(s.seed, v))
		size += len(k) + len(v)
	}
	return sum ^ uint64(len(m)), size
}

// quantityMap shares the map of quantities at p if sharing of maps is on
// and every quantity in it is in its int64 form (those of a decoded object
// are, unless too large or too precise for it).
func (s *Sharer) quantityMap(p unsafe.Pointer) {
	if !s.maps || !quantityLayoutKnown {
		return
	}
	m := *(*map[string]resource.Quantity)(p)
	if len(m) == 0 {
		return
	}
	h, ok := s.hashQuantities(m)
	if !ok {
		return
	}
	if shared, ok := s.sharedMaps[h]; ok && shared.shape == quantityValues {
		if sm := *(*map[string]resource.Quantity)(unsafe.Pointer(&shared.m)); maps.EqualFunc(sm, m, identicalQuantities) {
			*(*map[string]resource.Quantity)(p) = sm
			return
		}
	}
	if s.mapCandidates.seenBefore(h) {
		PutBounded(s.sharedMaps, MaxMaps, h, sharedMap{quantityValues, *(*unsafe.Pointer)(p)})
	}
}

// hashQuantities returns the hash of m's entries, whatever their order;
// false if a quantity is not in its int64 form.
func (s *Sharer) hashQuantities(m map[string]resource.Quantity) (uint64, bool) {
	var sum uint64
	for k, q := range m {
		mirror := mirrorOf(&q)
		if mirror.dec != nil {
			return 0, false
		}
		sum += entryHash(hashString(s.seed, k), maphash.Comparable(s.seed, quantityKey{mirror.value, mirror.scale, mirror.s, mirror.sFormat, mirror.format}))
	}
	return sum ^ uint64(len(m)), true
}

// entryHash mixes the hashes of a map entry's key and value into one, to
// be summed over the entries (a sum does not depend on their order).
func entryHash(key, value uint64) uint64 {
	return key ^ bits.RotateLeft64(value*0x9e3779b97f4a7c15, 31)
}
