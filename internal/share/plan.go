package share

import (
	"reflect"
	"sync"
	"time"
	"unsafe"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// walker shares what it can of the value of its type at p.
type walker func(s *Sharer, p unsafe.Pointer)

// plan is how to walk the values of one Go type; a nil walk, that there is
// nothing in them to share.
type plan struct {
	walk walker
}

var (
	// plans are the plans made and complete, by type: read without a lock.
	plans sync.Map // reflect.Type → *plan
	// planning serializes the making of plans, so that a type is planned
	// once and a recursive type (a CRD's JSONSchemaProps) finds its own
	// plan while it is made.
	planning sync.Mutex
	// made are the plans made under planning, complete or not: a plan is
	// published to plans only once every plan made with it is complete,
	// since a plan's walk may run another's.
	made = map[reflect.Type]*plan{}
)

// planOf returns the plan of t, making it (and those of the types in it)
// the first time.
func planOf(t reflect.Type) *plan {
	if p, ok := plans.Load(t); ok {
		return p.(*plan)
	}
	planning.Lock()
	defer planning.Unlock()
	p := planLocked(t)
	for typ, q := range made {
		plans.Store(typ, q)
	}
	clear(made)
	return p
}

// planLocked is planOf under planning, without publishing. A plan being
// made (t is recursive) is returned as it is: the walks that hold it call
// its walk when they run, once it is made.
func planLocked(t reflect.Type) *plan {
	if p, ok := plans.Load(t); ok {
		return p.(*plan)
	}
	if p, ok := made[t]; ok {
		return p
	}
	p := &plan{walk: pending}
	made[t] = p
	p.walk = walkerOf(t)
	return p
}

// pending is the walk of a plan being made: only a recursive type's own
// walkers can meet it, and only at planning time (holds checks it).
func pending(*Sharer, unsafe.Pointer) {}

// holds reports whether p may have something to walk: a plan with a walk,
// or one still being made.
func holds(p *plan) bool {
	return p.walk != nil
}

// Types whose values are left alone: times (no strings), quantities
// outside a map (their fields are unexported), raw extensions (bytes and an
// object a caller set).
var opaque = map[reflect.Type]bool{
	reflect.TypeFor[time.Time]():            true,
	reflect.TypeFor[metav1.Time]():          true,
	reflect.TypeFor[metav1.MicroTime]():     true,
	reflect.TypeFor[resource.Quantity]():    true,
	reflect.TypeFor[runtime.RawExtension](): true,
	reflect.TypeFor[runtime.Unknown]():      true,
}

// uniqueFields are the fields of a struct type whose values differ from
// object to object: not worth a look-up.
var uniqueFields = map[reflect.Type]map[string]bool{
	reflect.TypeFor[metav1.ObjectMeta](): {"Name": true, "UID": true, "ResourceVersion": true, "SelfLink": true},
	reflect.TypeFor[metav1.ListMeta]():   {"ResourceVersion": true, "Continue": true, "SelfLink": true},
}

// walkerOf makes the walker of t; nil if there is nothing to share in it.
func walkerOf(t reflect.Type) walker {
	if opaque[t] {
		return nil
	}
	switch t.Kind() {
	case reflect.String:
		return func(s *Sharer, p unsafe.Pointer) {
			str := (*string)(p)
			*str = s.string(*str)
		}
	case reflect.Struct:
		if t == reflect.TypeFor[metav1.FieldsV1]() {
			return fieldsV1Walker()
		}
		return structWalker(t)
	case reflect.Pointer:
		return pointerWalker(t)
	case reflect.Slice:
		return sliceWalker(t)
	case reflect.Map:
		return mapWalker(t)
	case reflect.Interface:
		if t != reflect.TypeFor[runtime.Object]() {
			// Any other interface (an error, a reflect.Type) may hold
			// what is not the decoder's to change, read-only memory
			// included.
			return nil
		}
		return interfaceWalker(t)
	}
	return nil
}

// fieldsV1Walker shares a FieldsV1's bytes. With apimachinery's
// fieldsv1string build tag a FieldsV1 holds a string, walked as one.
func fieldsV1Walker() walker {
	f, ok := reflect.TypeFor[metav1.FieldsV1]().FieldByName("Raw")
	if !ok || f.Type != reflect.TypeFor[[]byte]() {
		return structWalker(reflect.TypeFor[metav1.FieldsV1]())
	}
	return func(s *Sharer, p unsafe.Pointer) {
		if s.maps {
			raw := (*[]byte)(unsafe.Add(p, f.Offset))
			*raw = s.bytes(*raw)
		}
	}
}

// field is one field of a struct to walk.
type field struct {
	offset uintptr
	plan   *plan
}

// structWalker walks the exported fields of t that hold something to
// share, but its uniqueFields.
func structWalker(t reflect.Type) walker {
	var fields []field
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() || uniqueFields[t][f.Name] {
			continue
		}
		if p := planLocked(f.Type); holds(p) {
			fields = append(fields, field{f.Offset, p})
		}
	}
	if len(fields) == 0 {
		return nil
	}
	return func(s *Sharer, p unsafe.Pointer) {
		for _, f := range fields {
			if f.plan.walk != nil {
				f.plan.walk(s, unsafe.Add(p, f.offset))
			}
		}
	}
}

// pointerWalker walks what a non-nil pointer of type t points to, and
// makes a pointer to a flat struct point to the shared copy of an equal one
// (flat.go).
func pointerWalker(t reflect.Type) walker {
	elem := planLocked(t.Elem())
	var flat *flatSharer
	if t.Elem().Kind() == reflect.Struct {
		flat = flatSharerOf(t.Elem())
	}
	if !holds(elem) && flat == nil {
		return nil
	}
	return func(s *Sharer, p unsafe.Pointer) {
		q := *(*unsafe.Pointer)(p)
		if q == nil {
			return
		}
		if elem.walk != nil {
			elem.walk(s, q)
		}
		if flat != nil && s.maps {
			s.sharePointee(flat, p)
		}
	}
}

// sliceWalker walks the elements of a slice of type t, and remakes a slice
// with spare capacity at its length (trimmed). Byte slices are left alone
// (data, certificates: seldom equal, and a caller may hold one).
//
// Why trim: a decoder appends to the slices it fills, so their arrays grow
// by doubling, and a Pod's five conditions sit in an array of eight, its
// six volumes in eight, its three containers in four: about 2.3 KB of a
// realistic Pod's cache is spare capacity that nothing will ever use
// (docs/profiles/typed-cache-accounting.md). A list's items (elements that
// are objects themselves) are not trimmed: the informer keeps pointers into
// that array, so a copy would only add one.
func sliceWalker(t reflect.Type) walker {
	if t.Elem().Kind() == reflect.Uint8 {
		return nil
	}
	elem := planLocked(t.Elem())
	trim := t.Elem().Size() > 0 && !reflect.PointerTo(t.Elem()).Implements(reflect.TypeFor[runtime.Object]())
	var flat *flatSharer
	if trim {
		flat = flatSharerOf(t)
	}
	if !trim && !holds(elem) {
		return nil
	}
	size := t.Elem().Size()
	return func(s *Sharer, p unsafe.Pointer) {
		header := (*[]byte)(p) // a slice's header, whatever its element type
		if len(*header) == 0 {
			return
		}
		if trim && cap(*header) > len(*header) {
			trimSlice(t, p)
		}
		if elem.walk != nil {
			data := unsafe.Pointer(unsafe.SliceData(*header))
			for i := range len(*header) {
				elem.walk(s, unsafe.Add(data, uintptr(i)*size))
			}
		}
		if flat != nil && s.maps {
			s.shareSlice(flat, p)
		}
	}
}

// trimSlice replaces the slice of type t at p with a copy of its elements
// in an array of its length.
func trimSlice(t reflect.Type, p unsafe.Pointer) {
	v := reflect.NewAt(t, p).Elem()
	exact := reflect.MakeSlice(t, v.Len(), v.Len())
	reflect.Copy(exact, v)
	v.Set(exact)
}

// mapWalker walks a map of strings or of quantities, by string-kind keys;
// other maps are left alone (their values cannot be written in place).
func mapWalker(t reflect.Type) walker {
	if t.Key().Kind() != reflect.String {
		return nil
	}
	switch {
	case t.Elem().Kind() == reflect.String:
		return (*Sharer).stringMap
	case t.Elem() == reflect.TypeFor[resource.Quantity]():
		return (*Sharer).quantityMap
	}
	return nil
}

// interfaceWalker walks the value in a runtime.Object interface of type t
// (a list's items) by the plan of its dynamic type, if a pointer.
func interfaceWalker(t reflect.Type) walker {
	return func(s *Sharer, p unsafe.Pointer) {
		v := reflect.NewAt(t, p).Elem()
		if v.IsNil() {
			return
		}
		e := v.Elem()
		if e.Kind() != reflect.Pointer || e.IsNil() {
			return
		}
		if plan := planOf(e.Type().Elem()); plan.walk != nil {
			plan.walk(s, e.UnsafePointer()) // what the pointer points to
		}
	}
}
