package compact

import (
	"github.com/klauspost/compress/s2"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// Record is one object as a compact store keeps it: the metadata the store
// reads without decoding, and the object's compressed protobuf encoding.
// A Record is never changed once made: a new version of the object is a new
// Record.
//
// It implements metav1.Object (for client-go's key function and namespace
// index: meta.Accessor) with what it holds; the other fields read as their
// zero value and the setters do nothing. It is a runtime.Object whose deep
// copy is itself (it is immutable).
type Record struct {
	namespace, name string
	labels          map[string]string
	resourceVersion string
	uid             types.UID
	// apiVersion and kind are the object's TypeMeta, which its protobuf
	// encoding does not carry; "" if it had none.
	apiVersion, kind string
	// data is S2(protobuf(object)), with the Codec's dictionary.
	data []byte
}

// WithResourceVersion returns a copy of r that says it is at resource
// version rv (its encoding is r's): a known object's last good state, at
// the resource version of a delete whose payload did not decode.
func (r *Record) WithResourceVersion(rv string) runtime.Object {
	c := *r
	c.resourceVersion = rv
	return &c
}

// Size is the length of the record's compressed encoding, in bytes.
func (r *Record) Size() int { return len(r.data) }

// EncodedSize is the length of the object's protobuf encoding, in bytes,
// before compression: read from the compressed block's header, which
// holds it, with no decompression.
func (r *Record) EncodedSize() int {
	n, err := s2.DecodedLen(r.data)
	if err != nil { // not a Record made by a Codec
		return 0
	}
	return n
}

func (r *Record) GetObjectKind() schema.ObjectKind { return schema.EmptyObjectKind }
func (r *Record) DeepCopyObject() runtime.Object   { return r }

func (r *Record) GetNamespace() string                  { return r.namespace }
func (r *Record) GetName() string                       { return r.name }
func (r *Record) GetLabels() map[string]string          { return r.labels }
func (r *Record) GetResourceVersion() string            { return r.resourceVersion }
func (r *Record) GetUID() types.UID                     { return r.uid }
func (r *Record) GetGenerateName() string               { return "" }
func (r *Record) GetSelfLink() string                   { return "" }
func (r *Record) GetGeneration() int64                  { return 0 }
func (r *Record) GetCreationTimestamp() metav1.Time     { return metav1.Time{} }
func (r *Record) GetDeletionTimestamp() *metav1.Time    { return nil }
func (r *Record) GetDeletionGracePeriodSeconds() *int64 { return nil }
func (r *Record) GetAnnotations() map[string]string     { return nil }
func (r *Record) GetFinalizers() []string               { return nil }
func (r *Record) GetOwnerReferences() []metav1.OwnerReference {
	return nil
}
func (r *Record) GetManagedFields() []metav1.ManagedFieldsEntry { return nil }

func (r *Record) SetNamespace(string)                          {}
func (r *Record) SetName(string)                               {}
func (r *Record) SetGenerateName(string)                       {}
func (r *Record) SetUID(types.UID)                             {}
func (r *Record) SetResourceVersion(string)                    {}
func (r *Record) SetGeneration(int64)                          {}
func (r *Record) SetSelfLink(string)                           {}
func (r *Record) SetCreationTimestamp(metav1.Time)             {}
func (r *Record) SetDeletionTimestamp(*metav1.Time)            {}
func (r *Record) SetDeletionGracePeriodSeconds(*int64)         {}
func (r *Record) SetLabels(map[string]string)                  {}
func (r *Record) SetAnnotations(map[string]string)             {}
func (r *Record) SetFinalizers([]string)                       {}
func (r *Record) SetOwnerReferences([]metav1.OwnerReference)   {}
func (r *Record) SetManagedFields([]metav1.ManagedFieldsEntry) {}

var _ metav1.Object = (*Record)(nil)
