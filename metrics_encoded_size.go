package generic

import (
	"encoding/json"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/generic-informers/generic/internal/compact"
	"github.com/generic-informers/generic/internal/encodedsize"
	"github.com/generic-informers/generic/internal/listwatch"
)

// protobufSized is an object with a protobuf encoding, as k8s.io/api's
// types and metav1.PartialObjectMetadata have (gogo-generated code): Size
// is the length of its encoding, computed without encoding it.
// MarshalToSizedBuffer tells such a Size from a method of that name that
// means something else (a custom resource's own Size).
type protobufSized interface {
	Size() int
	MarshalToSizedBuffer([]byte) (int, error)
}

// encodedSize is the size in bytes of what the list/watch chain records of
// an object (the object, or its compact.Record), as
// InformerGauges.EncodedBytes defines it: the length of its protobuf
// encoding if its Go type has one (a Record's is the encoding it
// compressed), else of its JSON encoding as encoding/json writes it (an
// unstructured object's, walked without encoding it). An object that does
// not encode counts 0. It reads obj only.
func encodedSize(obj listwatch.Stored) int {
	switch o := obj.(type) {
	case *compact.Record:
		return o.EncodedSize()
	case protobufSized:
		return o.Size()
	case *unstructured.Unstructured:
		return encodedsize.JSON(o.Object)
	}
	data, err := json.Marshal(obj)
	if err != nil {
		return 0
	}
	return len(data)
}
