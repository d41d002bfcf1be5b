package compact

import (
	"errors"
	"fmt"
	"sync"

	"github.com/klauspost/compress/s2"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/lru"
)

// Protobuf is what a Go type needs to be kept compact: the protobuf
// methods of k8s.io/api's types (and of metav1.PartialObjectMetadata).
type Protobuf interface {
	Marshal() ([]byte, error)
	Unmarshal(data []byte) error
}

// Codec makes Records of objects of type T and objects of Records. It is
// safe for concurrent use.
type Codec[T runtime.Object] struct {
	newT func() T
	// decoded holds up to its size decoded objects, by Record (*Record →
	// T); nil if none are kept.
	decoded *lru.Cache
	// dict is the S2 dictionary every Record is compressed with: the
	// encoding of the first object made compact, so that what repeats
	// across objects of one kind (field values, managedFields) costs a
	// reference each.
	dictOnce sync.Once
	dict     *s2.Dict
	// buffers are decoding buffers, reused (Unmarshal copies what it
	// keeps).
	buffers sync.Pool
}

// NewCodec returns a Codec of the objects newT makes, which keeps up to
// decodedObjects decoded objects (0: none, every read decodes). It fails
// if a T has no protobuf encoding (Protobuf) or no metadata.
func NewCodec[T runtime.Object](newT func() T, decodedObjects int) (*Codec[T], error) {
	if decodedObjects < 0 {
		return nil, fmt.Errorf("%d decoded objects: want 0 or more", decodedObjects)
	}
	if err := Supports(newT); err != nil {
		return nil, err
	}
	c := &Codec[T]{newT: newT}
	if decodedObjects > 0 {
		c.decoded = lru.New(decodedObjects)
	}
	return c, nil
}

// Supports returns why objects newT makes cannot be kept compact, or nil.
func Supports[T runtime.Object](newT func() T) error {
	if newT == nil {
		return errors.New("the type has no constructor (it is not a pointer to a struct)")
	}
	t := newT()
	if _, ok := any(t).(Protobuf); !ok {
		return fmt.Errorf("%T has no protobuf encoding (Marshal and Unmarshal methods, as k8s.io/api's types have)", t)
	}
	if _, err := meta.Accessor(t); err != nil {
		return fmt.Errorf("%T has no object metadata: %w", t, err)
	}
	return nil
}

// Compact makes the Record of t, and keeps t as its decoded object.
func (c *Codec[T]) Compact(t T) (*Record, error) {
	m, err := meta.Accessor(t)
	if err != nil {
		return nil, err
	}
	raw, err := any(t).(Protobuf).Marshal()
	if err != nil {
		return nil, fmt.Errorf("encode %s/%s: %w", m.GetNamespace(), m.GetName(), err)
	}
	c.dictOnce.Do(func() { c.dict = s2.MakeDict(raw, nil) })
	var data []byte
	if c.dict != nil {
		data = c.dict.Encode(nil, raw)
	} else { // an encoding too short for a dictionary
		data = s2.Encode(nil, raw)
	}
	r := &Record{
		namespace: m.GetNamespace(), name: m.GetName(), labels: m.GetLabels(),
		resourceVersion: m.GetResourceVersion(), uid: m.GetUID(),
		data: exact(data),
	}
	if typeMeta, err := meta.TypeAccessor(t); err == nil {
		r.apiVersion, r.kind = typeMeta.GetAPIVersion(), typeMeta.GetKind()
	}
	c.remember(r, t)
	return r, nil
}

// exact returns data in an array of its length: an encoder's output buffer
// is sized for the worst case.
func exact(data []byte) []byte {
	if cap(data) == len(data) {
		return data
	}
	return append(make([]byte, 0, len(data)), data...)
}

// Decode returns the object of r: the one kept, or decoded anew (and then
// kept, in place of the least recently read).
func (c *Codec[T]) Decode(r *Record) (T, error) {
	if c.decoded != nil {
		if t, ok := c.decoded.Get(r); ok {
			return t.(T), nil
		}
	}
	t, err := c.decode(r)
	if err != nil {
		var zero T
		return zero, err
	}
	c.remember(r, t)
	return t, nil
}

func (c *Codec[T]) decode(r *Record) (T, error) {
	var zero T
	buf, _ := c.buffers.Get().(*[]byte)
	if buf == nil {
		buf = new([]byte)
	}
	defer c.buffers.Put(buf)
	var raw []byte
	var err error
	if c.dict != nil {
		raw, err = c.dict.Decode((*buf)[:cap(*buf)], r.data)
	} else {
		raw, err = s2.Decode((*buf)[:cap(*buf)], r.data)
	}
	if err != nil {
		return zero, fmt.Errorf("decompress %s/%s: %w", r.namespace, r.name, err)
	}
	*buf = raw
	t := c.newT()
	if err := any(t).(Protobuf).Unmarshal(raw); err != nil {
		return zero, fmt.Errorf("decode %s/%s: %w", r.namespace, r.name, err)
	}
	if r.apiVersion != "" || r.kind != "" {
		// protobuf carries no TypeMeta: it is the envelope's.
		if typeMeta, err := meta.TypeAccessor(t); err == nil {
			typeMeta.SetAPIVersion(r.apiVersion)
			typeMeta.SetKind(r.kind)
		}
	}
	return t, nil
}

func (c *Codec[T]) remember(r *Record, t T) {
	if c.decoded != nil {
		c.decoded.Add(r, t)
	}
}

// Object returns obj with a Record in it decoded: a *Record, or a
// cache.DeletedFinalStateUnknown that holds one. Anything else is returned
// as it is. A Record that does not decode (never expected: the Codec made
// it) is an error, with nil, or for a tombstone the tombstone with no
// object, so that a delete is not lost.
func (c *Codec[T]) Object(obj any) (any, error) {
	switch o := obj.(type) {
	case *Record:
		t, err := c.Decode(o)
		if err != nil {
			return nil, err
		}
		return t, nil
	case cache.DeletedFinalStateUnknown:
		if r, ok := o.Obj.(*Record); ok {
			t, err := c.Decode(r)
			if err != nil {
				o.Obj = nil
				return o, err
			}
			o.Obj = t
		}
		return o, nil
	}
	return obj, nil
}
