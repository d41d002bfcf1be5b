package generic

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Undecodable stands, in a list or a watch event, for one object a Source
// received but could not decode into its Go type: a Custom Resource whose
// stored JSON does not fit the CRD's Go type (a string where the Go field is
// an int), say. Sources that decode per item (package typed's REST source)
// deliver it in place of the object, so that one bad object costs only
// itself, not the whole list or watch.
//
// The ingest of every informer reports an Undecodable as a
// *ConversionError naming the resource, Namespace/Name and Err, and never
// stores it: an object the cache held leaves it as a delete of its last
// good state.
type Undecodable struct {
	// GVK is the kind the object was to be decoded as, where known.
	GVK schema.GroupVersionKind
	// Namespace and Name are read from the raw bytes' metadata when it can
	// be read; both are empty when it cannot.
	Namespace, Name string
	// Raw holds the object's bytes as the server sent them.
	Raw []byte
	// Err is why it did not decode.
	Err error
}

var _ runtime.Object = (*Undecodable)(nil)

// GetObjectKind returns GVK, as an ObjectKind that ignores changes.
func (u *Undecodable) GetObjectKind() schema.ObjectKind { return undecodableKind{u.GVK} }

// DeepCopyObject copies u; Err is shared.
func (u *Undecodable) DeepCopyObject() runtime.Object {
	if u == nil {
		return nil
	}
	c := *u
	c.Raw = append([]byte(nil), u.Raw...)
	return &c
}

// Key is the cache key the object would have had: "namespace/name", "name",
// or "" when its metadata could not be read.
func (u *Undecodable) Key() string {
	switch {
	case u.Name == "":
		return ""
	case u.Namespace == "":
		return u.Name
	}
	return u.Namespace + "/" + u.Name
}

// Error describes the object and why it did not decode.
func (u *Undecodable) Error() string {
	return fmt.Sprintf("decode %s %q: %v", u.GVK, u.Key(), u.Err)
}

// Unwrap returns Err.
func (u *Undecodable) Unwrap() error { return u.Err }

type undecodableKind struct{ gvk schema.GroupVersionKind }

func (k undecodableKind) SetGroupVersionKind(schema.GroupVersionKind) {}
func (k undecodableKind) GroupVersionKind() schema.GroupVersionKind   { return k.gvk }
