package share

import (
	"reflect"
	"unsafe"

	"k8s.io/apimachinery/pkg/api/resource"
)

// quantityMirror is resource.Quantity's memory layout, whose fields are
// unexported: two quantities are identical, as reflect.DeepEqual sees them,
// when their mirrors' fields are equal and dec is nil in both. It is used
// only if quantityLayoutKnown: the layout is checked against
// resource.Quantity's at start, and a version of apimachinery that changes
// it only turns the sharing of quantities off.
type quantityMirror struct {
	value   int64          // i.value
	scale   int32          // i.scale
	dec     unsafe.Pointer // d.Dec
	s       string         // s.str, the cached text
	sFormat uint8          // s.format, the format code the text is cached for
	format  string         // Format
}

// quantityKey is what a quantity in its int64 form is hashed by.
type quantityKey struct {
	value   int64
	scale   int32
	s       string
	sFormat uint8
	format  string
}

var quantityLayoutKnown = quantityLayoutMatches()

// quantityLayoutMatches reports whether resource.Quantity is laid out as
// quantityMirror: i (value int64, scale int32), d (one pointer), s (the
// cached text and its format code, apimachinery v0.38's cachedString) and
// Format (a string), at the mirror's offsets.
func quantityLayoutMatches() bool {
	q := reflect.TypeFor[resource.Quantity]()
	m := reflect.TypeFor[quantityMirror]()
	if q.Size() != m.Size() || q.NumField() != 4 {
		return false
	}
	field := func(t reflect.Type, path ...string) (reflect.StructField, bool) {
		var offset uintptr
		var f reflect.StructField
		for _, name := range path {
			var ok bool
			if f, ok = t.FieldByName(name); !ok {
				return f, false
			}
			offset += f.Offset
			t = f.Type
		}
		f.Offset = offset
		return f, true
	}
	want := []struct {
		path   []string
		mirror string
		kind   reflect.Kind
	}{
		{[]string{"i", "value"}, "value", reflect.Int64},
		{[]string{"i", "scale"}, "scale", reflect.Int32},
		{[]string{"d", "Dec"}, "dec", reflect.Pointer},
		{[]string{"s", "str"}, "s", reflect.String},
		{[]string{"s", "format"}, "sFormat", reflect.Uint8},
		{[]string{"Format"}, "format", reflect.String},
	}
	for _, w := range want {
		f, ok := field(q, w.path...)
		mf, _ := m.FieldByName(w.mirror)
		if !ok || f.Offset != mf.Offset || f.Type.Kind() != w.kind {
			return false
		}
	}
	return true
}

// mirrorOf reads q through its mirror; only if quantityLayoutKnown.
func mirrorOf(q *resource.Quantity) *quantityMirror {
	return (*quantityMirror)(unsafe.Pointer(q))
}

// identicalQuantities reports whether a and b are identical, both in their
// int64 form.
func identicalQuantities(a, b resource.Quantity) bool {
	ma, mb := mirrorOf(&a), mirrorOf(&b)
	return ma.dec == nil && mb.dec == nil && ma.value == mb.value && ma.scale == mb.scale && ma.s == mb.s && ma.sFormat == mb.sFormat && ma.format == mb.format
}
