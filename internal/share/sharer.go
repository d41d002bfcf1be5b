package share

import (
	"hash/maphash"
	"reflect"
	"sync"
	"unsafe"
)

// Bounds of a Sharer's tables. A table that reaches its bound is emptied
// and starts again (PutBounded).
const (
	// MaxStrings is how many distinct strings it shares: about 64 bytes of
	// table each, 4 MiB at most.
	MaxStrings = 1 << 16
	// MaxStringLength is the longest string it shares. Longer ones (a
	// ConfigMap's payload, an annotation of a whole manifest) rarely
	// repeat, and hashing them costs more than it saves; an image
	// reference with its digest (about 110 bytes) is shorter.
	MaxStringLength = 256
	// MaxFieldsV1 is how many distinct managedFields fieldsV1 it shares.
	MaxFieldsV1 = 1 << 12
	// MaxMaps is how many distinct maps it shares.
	MaxMaps = 1 << 12
	// MaxMapBytes bounds the keys and values of a map it shares, in bytes:
	// a map that large is seldom met twice, and hashing it is not free.
	MaxMapBytes = 1 << 10
)

// Sharer holds the values that objects share. One Sharer serves every
// decoder of a factory: it is safe for concurrent use (one object is walked
// at a time).
type Sharer struct {
	// maps is whether equal maps and fieldsV1 bytes are shared, not only
	// strings.
	maps bool

	mu   sync.Mutex
	seed maphash.Seed
	// strings are the shared strings, by themselves.
	strings          map[string]string
	stringCandidates hashCandidates
	// fieldsV1 are the shared fieldsV1 bytes, by themselves (the key is
	// the value's own bytes, not a copy).
	fieldsV1           map[string][]byte
	fieldsV1Candidates hashCandidates
	// sharedMaps are the shared maps, by the hash of their content (a
	// map of strings and a map of quantities of equal hashes are told
	// apart by their entries: mapShapes).
	sharedMaps    map[uint64]sharedMap
	mapCandidates hashCandidates
	// flat are the shared slices and pointed-to structs of flat values, by
	// their keys (flat.go); keyBuf is where a key is written.
	flat           map[string]flatValue
	flatCandidates hashCandidates
	keyBuf         []byte
}

// New returns a Sharer. With maps, equal maps of strings (labels,
// annotations, selectors, a ConfigMap's data), equal maps of quantities
// (ResourceList), equal fieldsV1 bytes, and equal slices and pointed-to
// structs of flat values (flat.go: ownerReferences, tolerations, env,
// probes, managedFields) are shared too, not only strings.
func New(maps bool) *Sharer {
	return &Sharer{
		maps:       maps,
		seed:       maphash.MakeSeed(),
		strings:    map[string]string{},
		fieldsV1:   map[string][]byte{},
		sharedMaps: map[uint64]sharedMap{},
		flat:       map[string]flatValue{},
	}
}

// Object makes obj, a pointer to a struct (a decoded object or list), share
// what repeats with the objects walked before it, in place. Anything else
// (nil, a non-pointer) is left alone. obj must not be in use elsewhere
// while it is walked: it is meant for an object just decoded.
func (s *Sharer) Object(obj any) {
	if s == nil || obj == nil {
		return
	}
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return
	}
	p := planOf(v.Type().Elem())
	if p.walk == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p.walk(s, v.UnsafePointer())
}

// string returns the shared copy of str: str itself the first time it is
// met, the copy kept from its second sighting on.
func (s *Sharer) string(str string) string {
	if len(str) == 0 || len(str) > MaxStringLength {
		return str
	}
	if shared, ok := s.strings[str]; ok {
		return shared
	}
	if s.stringCandidates.seenBefore(hashString(s.seed, str)) {
		PutBounded(s.strings, MaxStrings, str, str)
	}
	return str
}

// bytes returns the shared copy of raw, fieldsV1 bytes.
func (s *Sharer) bytes(raw []byte) []byte {
	if len(raw) == 0 {
		return raw
	}
	if shared, ok := s.fieldsV1[string(raw)]; ok {
		return shared
	}
	if s.fieldsV1Candidates.seenBefore(maphash.Bytes(s.seed, raw)) {
		// The key is raw's own bytes: raw is kept for as long as the
		// entry, and never written to (cached objects are read-only).
		PutBounded(s.fieldsV1, MaxFieldsV1, unsafe.String(&raw[0], len(raw)), raw)
	}
	return raw
}
