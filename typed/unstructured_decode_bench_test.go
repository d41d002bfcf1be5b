package typed

import (
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	"github.com/generic-informers/generic/internal/share"
)

// BenchmarkDecodeConfigMapList decodes one list of 1,000 ConfigMaps like
// the sync benchmark's (a 2 KiB value, a label, one managedFields entry),
// encoded in process as the API server encodes it: the client's side of an
// initial sync, without the server's. One op is the whole list.
//
//   - dynamic-client: unstructured.UnstructuredJSONScheme, as client-go's
//     dynamic client (and the drop-in) decode a list;
//
//   - unstructured-json: UnstructuredFor's JSON decoder (one pass, interned);
//
//   - unstructured-protobuf: UnstructuredFor's protobuf decoder (typed,
//     converted once, interned);
//
//   - unstructured-json-nointern, unstructured-protobuf-nointern: the same
//     without the interner (what interning costs in time);
//
//   - typed-json, typed-protobuf: the typed informers' codecs.
//
//     go test ./typed -run '^$' -bench DecodeConfigMapList -benchmem
func BenchmarkDecodeConfigMapList(b *testing.B) {
	const n = 1000
	list := benchConfigMapList(n)
	codecs := serializer.NewCodecFactory(clientgoscheme.Scheme)
	jsonData := encodeAs(b, codecs, runtime.ContentTypeJSON, list)
	protobufData := encodeAs(b, codecs, runtime.ContentTypeProtobuf, list)
	decoderFor := func(negotiated runtime.NegotiatedSerializer, mediaType string) runtime.Decoder {
		d, err := runtime.NewClientNegotiator(negotiated, corev1.SchemeGroupVersion).Decoder(mediaType, nil)
		if err != nil {
			b.Fatal(err)
		}
		return d
	}
	unstructuredCodecs := newUnstructuredSerializer(codecs, share.NewInterner(share.EqualTrees))
	contenders := []struct {
		name    string
		data    []byte
		decoder runtime.Decoder
	}{
		{"dynamic-client", jsonData, unstructured.UnstructuredJSONScheme},
		{"unstructured-json", jsonData, decoderFor(unstructuredCodecs, runtime.ContentTypeJSON)},
		{"unstructured-protobuf", protobufData, decoderFor(unstructuredCodecs, runtime.ContentTypeProtobuf)},
		{"unstructured-json-nointern", jsonData, decoderFor(newUnstructuredSerializer(codecs, nil), runtime.ContentTypeJSON)},
		{"unstructured-protobuf-nointern", protobufData, decoderFor(newUnstructuredSerializer(codecs, nil), runtime.ContentTypeProtobuf)},
		{"typed-json", jsonData, decoderFor(codecs.WithoutConversion(), runtime.ContentTypeJSON)},
		{"typed-protobuf", protobufData, decoderFor(codecs.WithoutConversion(), runtime.ContentTypeProtobuf)},
	}
	for _, c := range contenders {
		b.Run("contender="+c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				obj, err := runtime.Decode(c.decoder, c.data)
				if err != nil {
					b.Fatal(err)
				}
				if items, _ := obj.(interface {
					EachListItem(func(runtime.Object) error) error
				}); items == nil {
					if _, ok := obj.(*corev1.ConfigMapList); !ok {
						b.Fatalf("decoded a %T", obj)
					}
				}
			}
		})
	}
}

func benchConfigMapList(n int) *corev1.ConfigMapList {
	payload := strings.Repeat("generic informers ", 110)
	created := metav1.NewTime(time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC))
	list := &corev1.ConfigMapList{ListMeta: metav1.ListMeta{ResourceVersion: "100000"}}
	for i := range n {
		fieldsV1 := &metav1.FieldsV1{} // SetRawString: Raw is no field with the fieldsv1string build tag
		fieldsV1.SetRawString(`{"f:data":{".":{},"f:payload":{}},"f:metadata":{"f:labels":{".":{},"f:app":{}}}}`)
		list.Items = append(list.Items, corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{
				Name: "cm-" + strconv.Itoa(i), Namespace: "bench-" + strconv.Itoa(i%10),
				UID:             types.UID("6f1c2c38-8a5e-4d2b-9c55-" + strconv.Itoa(100000000000+i)),
				ResourceVersion: strconv.Itoa(1000 + i), CreationTimestamp: created,
				Labels: map[string]string{"app": "app-" + strconv.Itoa(i%10)},
				ManagedFields: []metav1.ManagedFieldsEntry{{
					Manager: "bench.test", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1",
					Time: &created, FieldsType: "FieldsV1",
					FieldsV1: fieldsV1,
				}},
			},
			Data: map[string]string{"payload": payload},
		})
	}
	return list
}

func encodeAs(b testing.TB, codecs serializer.CodecFactory, mediaType string, obj runtime.Object) []byte {
	info, _ := runtime.SerializerInfoForMediaType(codecs.SupportedMediaTypes(), mediaType)
	data, err := runtime.Encode(codecs.EncoderForVersion(info.Serializer, corev1.SchemeGroupVersion), obj)
	if err != nil {
		b.Fatal(err)
	}
	return data
}
