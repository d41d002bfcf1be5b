package generic

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	"github.com/generic-informers/generic/internal/listwatch"
)

// Undecodable stands, in a list or a watch event, for one object a Source
// received but could not decode into its Go type: a Custom Resource whose
// stored JSON does not fit the CRD's Go type (a string where the Go field is
// an int), say. Sources that decode per item (package typed's REST source)
// deliver it in place of the object, so that one bad object costs only
// itself, not the whole list or watch.
//
// The ingest of every informer reports an Undecodable as a
// *ConversionError naming the resource, Namespace/Name and Err (the list/
// watch chain recognises it by its ObjectName and Unwrap), and never
// stores it. An object the cache holds keeps its last good state there,
// marked stale (Status.Stale), until a state of it decodes or the server
// deletes it: a delete is a fact from the server, never an inference from
// an error.
type Undecodable struct {
	// GVK is the kind the object was to be decoded as, where known.
	GVK schema.GroupVersionKind
	// Namespace and Name are read from the raw bytes' metadata when it can
	// be read; both are empty when it cannot.
	Namespace, Name string
	// ResourceVersion is the object's, read as Namespace and Name are;
	// empty when it cannot be read. The cache's resource version moves to
	// it, as it would have with the object (see Status.Stale).
	ResourceVersion string
	// Raw holds the object's bytes as the server sent them.
	Raw []byte
	// Err is why it did not decode.
	Err error
}

// The list/watch chain takes an *Undecodable for what it is.
var _ listwatch.Undecodable = (*Undecodable)(nil)

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

// ObjectName is the object's name, as client-go's cache names it:
// ObjectName().String() is the cache key it would have had
// ("namespace/name" or "name"). It is the zero ObjectName when the
// metadata could not be read.
func (u *Undecodable) ObjectName() cache.ObjectName {
	return cache.ObjectName{Namespace: u.Namespace, Name: u.Name}
}

// ObjectResourceVersion returns ResourceVersion: the list/watch chain reads
// it by this method.
func (u *Undecodable) ObjectResourceVersion() string { return u.ResourceVersion }

// Error describes the object and why it did not decode.
func (u *Undecodable) Error() string {
	return fmt.Sprintf("decode %s %q: %v", u.GVK, u.ObjectName(), u.Err)
}

// Unwrap returns Err.
func (u *Undecodable) Unwrap() error { return u.Err }

type undecodableKind struct{ gvk schema.GroupVersionKind }

func (k undecodableKind) SetGroupVersionKind(schema.GroupVersionKind) {}
func (k undecodableKind) GroupVersionKind() schema.GroupVersionKind   { return k.gvk }
