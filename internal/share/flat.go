package share

import (
	"encoding/binary"
	"hash/maphash"
	"reflect"
	"unsafe"
)

// Equal slices and pointed-to structs of flat values.
//
// A value is flat when it holds no map, interface, channel or function, at
// any depth: strings, numbers, bools, and pointers, slices, arrays and
// structs of flat values. A Pod of a Deployment repeats many of them from
// its siblings: its ownerReferences, tolerations, ports, env, args and
// probes (a *Probe), and a managedFields entry's *Time; a ConfigMap
// written in the same second as others repeats its managedFields. The
// Sharer keys each by its content and makes equal ones one slice or one
// pointer, as it does with maps.
//
// A flat value's key is its content, byte for byte, so that equal keys
// mean equal values (reflect.DeepEqual): strings by length and bytes,
// numbers and bools by their bytes, pointers by whether nil and then the
// key of what they point to, slices by whether nil, their length and their
// elements. An unexported field is keyed by its own memory, pointers
// included: equal memory is the same value (the same Location of a
// time.Time, the same unique.Handle of an interned FieldsV1), and a value
// whose memory differs is only not shared.

// keyer appends the key of the flat value at p to buf.
type keyer func(buf []byte, p unsafe.Pointer) []byte

const (
	// MaxFlat is how many distinct slices and pointed-to structs a Sharer
	// shares.
	MaxFlat = 1 << 12
	// MaxFlatKeyBytes bounds the key of a value it shares: a larger one
	// (a long list of env vars) is seldom met twice.
	MaxFlatKeyBytes = 1 << 10
)

// keyers are the keyers made, by type; nil for a type that is not flat. A
// type being made maps to nil too, so that a recursive type is not flat.
// Made and read under planning only.
var keyers = map[reflect.Type]keyer{}

// keyerOf returns the keyer of t, nil if t is not flat. Called under
// planning.
func keyerOf(t reflect.Type) keyer {
	if k, ok := keyers[t]; ok {
		return k
	}
	keyers[t] = nil
	k := makeKeyer(t)
	keyers[t] = k
	return k
}

func makeKeyer(t reflect.Type) keyer {
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128:
		return memoryKeyer(t.Size())
	case reflect.String:
		return func(buf []byte, p unsafe.Pointer) []byte {
			s := *(*string)(p)
			return append(binary.AppendUvarint(buf, uint64(len(s))), s...)
		}
	case reflect.Pointer:
		return pointerKeyer(t)
	case reflect.Slice:
		return sliceKeyer(t)
	case reflect.Array:
		return arrayKeyer(t)
	case reflect.Struct:
		return structKeyer(t)
	}
	return nil
}

// memoryKeyer keys a value by its size bytes of memory.
func memoryKeyer(size uintptr) keyer {
	return func(buf []byte, p unsafe.Pointer) []byte {
		return append(buf, unsafe.Slice((*byte)(p), size)...)
	}
}

func pointerKeyer(t reflect.Type) keyer {
	elem := keyerOf(t.Elem())
	if elem == nil {
		return nil
	}
	return func(buf []byte, p unsafe.Pointer) []byte {
		q := *(*unsafe.Pointer)(p)
		if q == nil {
			return append(buf, 0)
		}
		return elem(append(buf, 1), q)
	}
}

func sliceKeyer(t reflect.Type) keyer {
	if t.Elem().Kind() == reflect.Uint8 {
		return func(buf []byte, p unsafe.Pointer) []byte {
			b := *(*[]byte)(p)
			if b == nil {
				return append(buf, 0)
			}
			return append(binary.AppendUvarint(append(buf, 1), uint64(len(b))), b...)
		}
	}
	elem := keyerOf(t.Elem())
	if elem == nil {
		return nil
	}
	size := t.Elem().Size()
	return func(buf []byte, p unsafe.Pointer) []byte {
		header := *(*[]byte)(p)
		if header == nil {
			return append(buf, 0)
		}
		buf = binary.AppendUvarint(append(buf, 1), uint64(len(header)))
		data := unsafe.Pointer(unsafe.SliceData(header))
		for i := range len(header) {
			buf = elem(buf, unsafe.Add(data, uintptr(i)*size))
		}
		return buf
	}
}

func arrayKeyer(t reflect.Type) keyer {
	elem := keyerOf(t.Elem())
	if elem == nil {
		return nil
	}
	size, n := t.Elem().Size(), t.Len()
	return func(buf []byte, p unsafe.Pointer) []byte {
		for i := range n {
			buf = elem(buf, unsafe.Add(p, uintptr(i)*size))
		}
		return buf
	}
}

// structKeyer keys a struct by its fields: exported ones by their keyers,
// unexported ones by their memory.
func structKeyer(t reflect.Type) keyer {
	type fieldKeyer struct {
		offset uintptr
		key    keyer
	}
	var fields []fieldKeyer
	for i := range t.NumField() {
		f := t.Field(i)
		k := memoryKeyer(f.Type.Size())
		if f.IsExported() {
			if k = keyerOf(f.Type); k == nil {
				return nil
			}
		}
		fields = append(fields, fieldKeyer{f.Offset, k})
	}
	return func(buf []byte, p unsafe.Pointer) []byte {
		for _, f := range fields {
			buf = f.key(buf, unsafe.Add(p, f.offset))
		}
		return buf
	}
}

// flatValue is a shared slice (data, len and cap) or pointer (data).
type flatValue struct {
	data     unsafe.Pointer
	len, cap int
}

// typeTags number the types whose values are shared by key, so that two
// types of the same content are never taken for one another: a key starts
// with its type's tag. Made under planning only.
var typeTags = map[reflect.Type][]byte{}

// typeTag returns t's tag. Called under planning.
func typeTag(t reflect.Type) []byte {
	if tag, ok := typeTags[t]; ok {
		return tag
	}
	tag := binary.AppendUvarint(nil, uint64(len(typeTags)+1))
	typeTags[t] = tag
	return tag
}

// flatSharer shares the values of one flat type: its tag and keyer.
type flatSharer struct {
	tag []byte
	key keyer
}

// flatSharerOf returns the flatSharer of t; nil if t is not flat. Called
// under planning.
func flatSharerOf(t reflect.Type) *flatSharer {
	key := keyerOf(t)
	if key == nil {
		return nil
	}
	return &flatSharer{tag: typeTag(t), key: key}
}

// sharedFlat returns the shared copy of the flat value at p (of f's
// type), and whether there is one; it keeps v as that value's shared copy
// from the second sighting of its key on.
func (s *Sharer) sharedFlat(f *flatSharer, p unsafe.Pointer, v flatValue) (flatValue, bool) {
	s.keyBuf = f.key(append(s.keyBuf[:0], f.tag...), p)
	key := s.keyBuf
	if len(key) > MaxFlatKeyBytes {
		if cap(s.keyBuf) > 4*MaxFlatKeyBytes {
			s.keyBuf = nil // the key of a large value: not kept for the next
		}
		return flatValue{}, false
	}
	if shared, ok := s.flat[string(key)]; ok {
		return shared, true
	}
	if s.flatCandidates.seenBefore(maphash.Bytes(s.seed, key)) {
		PutBounded(s.flat, MaxFlat, string(key), v)
	}
	return flatValue{}, false
}

// shareSlice makes the non-empty slice at p, of f's type, the shared copy
// of an equal one met before.
func (s *Sharer) shareSlice(f *flatSharer, p unsafe.Pointer) {
	header := (*flatValue)(p) // a slice's header: data, len, cap
	if shared, ok := s.sharedFlat(f, p, *header); ok {
		*header = shared
	}
}

// sharePointee makes the non-nil pointer at p, to a value of f's type,
// point to the shared copy of an equal value met before.
func (s *Sharer) sharePointee(f *flatSharer, p unsafe.Pointer) {
	ptr := (*unsafe.Pointer)(p)
	if shared, ok := s.sharedFlat(f, *ptr, flatValue{data: *ptr}); ok {
		*ptr = shared.data
	}
}
