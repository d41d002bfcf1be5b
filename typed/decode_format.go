package typed

import (
	"bytes"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// wireFormat takes apart and puts together encoded objects and lists of one
// media type, for perItemDecoder's fallback: only what decoding item by item
// needs, without knowing the Go types.
type wireFormat interface {
	// kindOf reads the kind an encoded object or list declares; it is empty
	// where the encoding has none (a protobuf list item).
	kindOf(data []byte) (schema.GroupVersionKind, error)
	// keyOf reads the namespace, name and resourceVersion of an encoded
	// object or list item, or returns empty strings if its metadata
	// cannot be read.
	keyOf(data []byte) objectKey
	// splitList reads an encoded list's metadata and returns its items,
	// each as encoded in the list.
	splitList(data []byte) (metav1.ListMeta, [][]byte, error)
	// encodeKind encodes an object of kind gvk with nothing else set.
	encodeKind(gvk schema.GroupVersionKind) ([]byte, error)
	// encodeList encodes a list of kind gvk holding item alone.
	encodeList(gvk schema.GroupVersionKind, item []byte) ([]byte, error)
}

// wireFormatOf tells the media type of data from its first bytes, as
// apimachinery's recognizing decoders do; ok is false for media types other
// than JSON and protobuf.
func wireFormatOf(data []byte) (format wireFormat, ok bool) {
	switch {
	case bytes.HasPrefix(data, protobufPrefix):
		return protobufFormat{}, true
	case bytes.HasPrefix(bytes.TrimLeft(data, " \t\r\n"), []byte("{")):
		return jsonFormat{}, true
	}
	return nil, false
}

// objectKey is what keyOf reads of an object's metadata.
type objectKey struct{ namespace, name, resourceVersion string }
