package typed

import (
	"bytes"
	"errors"
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// protobufPrefix starts every object apimachinery's protobuf serializer
// encodes, before the runtime.Unknown that holds the kind and the object's
// message.
var protobufPrefix = []byte{0x6b, 0x38, 0x73, 0x00} // "k8s\x00"

// Field numbers the Kubernetes API's protobuf messages share: every list
// has its ListMeta as field 1 and its items as field 2, every object its
// ObjectMeta as field 1, and ObjectMeta has name 1 and namespace 3.
const (
	listMetaField      protowire.Number = 1
	listItemsField     protowire.Number = 2
	objectMetaField    protowire.Number = 1
	metaNameField      protowire.Number = 1
	metaNamespaceField protowire.Number = 3
	metaRVField        protowire.Number = 6
)

// protobufFormat is the wireFormat of protobuf, in which the API server
// serves built-in resources. A list item is its object's message, with no
// runtime.Unknown around it and so no kind.
type protobufFormat struct{}

var errNoProtobufPrefix = errors.New("typed: not a Kubernetes protobuf object")

// unknown reads the runtime.Unknown that data, prefix included, encodes.
func (protobufFormat) unknown(data []byte) (runtime.Unknown, error) {
	var unknown runtime.Unknown
	if !bytes.HasPrefix(data, protobufPrefix) {
		return unknown, errNoProtobufPrefix
	}
	if err := unknown.Unmarshal(data[len(protobufPrefix):]); err != nil {
		return unknown, fmt.Errorf("typed: protobuf envelope: %w", err)
	}
	return unknown, nil
}

// encode encodes an object of kind gvk whose message is raw.
func (protobufFormat) encode(gvk schema.GroupVersionKind, raw []byte) ([]byte, error) {
	apiVersion, kind := gvk.ToAPIVersionAndKind()
	unknown := runtime.Unknown{TypeMeta: runtime.TypeMeta{APIVersion: apiVersion, Kind: kind}, Raw: raw}
	message, err := unknown.Marshal()
	if err != nil {
		return nil, fmt.Errorf("typed: protobuf envelope of %v: %w", gvk, err)
	}
	return append(bytes.Clone(protobufPrefix), message...), nil
}

func (f protobufFormat) kindOf(data []byte) (schema.GroupVersionKind, error) {
	unknown, err := f.unknown(data)
	if err != nil {
		return schema.GroupVersionKind{}, err
	}
	return unknown.GroupVersionKind(), nil
}

// keyOf reads the name, namespace and resourceVersion of data, an encoded object or a list
// item, straight from the wire: a message that does not decode as a whole
// may still name itself.
func (f protobufFormat) keyOf(data []byte) objectKey {
	message := data
	if bytes.HasPrefix(data, protobufPrefix) {
		unknown, err := f.unknown(data)
		if err != nil {
			return objectKey{}
		}
		message = unknown.Raw
	}
	var objectMeta []byte
	err := eachField(message, func(num protowire.Number, value []byte) {
		if num == objectMetaField {
			objectMeta = value
		}
	})
	if err != nil || objectMeta == nil {
		return objectKey{}
	}
	var key objectKey
	err = eachField(objectMeta, func(num protowire.Number, value []byte) {
		switch num {
		case metaNameField:
			key.name = string(value)
		case metaNamespaceField:
			key.namespace = string(value)
		case metaRVField:
			key.resourceVersion = string(value)
		}
	})
	if err != nil {
		return objectKey{}
	}
	return key
}

func (f protobufFormat) splitList(data []byte) (metav1.ListMeta, [][]byte, error) {
	var listMeta metav1.ListMeta
	unknown, err := f.unknown(data)
	if err != nil {
		return listMeta, nil, err
	}
	var items [][]byte
	var metaErr error
	err = eachField(unknown.Raw, func(num protowire.Number, value []byte) {
		switch num {
		case listMetaField:
			// As in generated Unmarshal code, a repeated message field
			// merges into the one before.
			metaErr = errors.Join(metaErr, listMeta.Unmarshal(value))
		case listItemsField:
			items = append(items, value)
		}
	})
	if err = errors.Join(err, metaErr); err != nil {
		return metav1.ListMeta{}, nil, fmt.Errorf("typed: protobuf list: %w", err)
	}
	return listMeta, items, nil
}

func (f protobufFormat) encodeKind(gvk schema.GroupVersionKind) ([]byte, error) {
	return f.encode(gvk, nil)
}

func (f protobufFormat) encodeList(gvk schema.GroupVersionKind, item []byte) ([]byte, error) {
	raw := protowire.AppendTag(nil, listItemsField, protowire.BytesType)
	return f.encode(gvk, protowire.AppendBytes(raw, item))
}

// eachField calls visit with the number and value of every
// length-delimited field of message (the only kind that holds messages,
// strings and bytes), skipping fields of other wire types. It fails on a
// message that is not well-formed protobuf.
func eachField(message []byte, visit func(num protowire.Number, value []byte)) error {
	for len(message) > 0 {
		num, typ, n := protowire.ConsumeTag(message)
		if n < 0 {
			return protowire.ParseError(n)
		}
		message = message[n:]
		if typ != protowire.BytesType {
			n = protowire.ConsumeFieldValue(num, typ, message)
			if n < 0 {
				return protowire.ParseError(n)
			}
			message = message[n:]
			continue
		}
		value, n := protowire.ConsumeBytes(message)
		if n < 0 {
			return protowire.ParseError(n)
		}
		visit(num, value)
		message = message[n:]
	}
	return nil
}
