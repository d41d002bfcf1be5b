package typed

import (
	"reflect"
	"testing"
	"unsafe"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	"github.com/generic-informers/generic/internal/share"
)

// TestProtobufPathSharesFieldsV1: on the protobuf path, the fieldsV1 the
// interner decodes from its encoded form are shared between objects
// managed alike, unless sharing is off; the objects are equal either way
// (TestProtobufToUnstructuredEqualsJSON). internal/share's tests hold the
// interner's other sharing.
func TestProtobufPathSharesFieldsV1(t *testing.T) {
	codecs := serializer.NewCodecFactory(clientgoscheme.Scheme)
	data := encodeAs(t, codecs, runtime.ContentTypeProtobuf, benchConfigMapList(2))
	for _, sharing := range []share.Sharing{share.EqualTrees, share.StringsOnly} {
		negotiated := newUnstructuredSerializer(codecs, share.NewInterner(sharing))
		decoder, err := runtime.NewClientNegotiator(negotiated, clientgoscheme.Scheme.PrioritizedVersionsAllGroups()[0]).Decoder(runtime.ContentTypeProtobuf, nil)
		if err != nil {
			t.Fatal(err)
		}
		obj, _, err := decoder.Decode(data, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		one, two := obj.(*unstructured.UnstructuredList).Items[0], obj.(*unstructured.UnstructuredList).Items[1]
		fieldsV1 := func(u unstructured.Unstructured) unsafe.Pointer {
			metadata, _ := u.Object["metadata"].(map[string]any)
			entries, _ := metadata["managedFields"].([]any)
			if len(entries) == 0 {
				return nil
			}
			entry, _ := entries[0].(map[string]any)
			tree, _ := entry["fieldsV1"].(map[string]any)
			if tree == nil {
				return nil
			}
			return reflect.ValueOf(tree).UnsafePointer()
		}
		if got := fieldsV1(one) != nil && fieldsV1(one) == fieldsV1(two); got != (sharing == share.EqualTrees) {
			t.Errorf("sharing %v: fieldsV1 of both objects one map = %v", sharing, got)
		}
		// The kind and apiVersion the items get from their list are
		// shared, not boxed anew in every object, whatever sharing.
		for _, key := range []string{"kind", "apiVersion"} {
			a, b := one.Object[key], two.Object[key]
			if a == nil || (*[2]unsafe.Pointer)(unsafe.Pointer(&a))[1] != (*[2]unsafe.Pointer)(unsafe.Pointer(&b))[1] {
				t.Errorf("sharing %v: %s of both objects not one boxed string", sharing, key)
			}
		}
	}
}
