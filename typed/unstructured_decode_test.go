package typed

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	"github.com/generic-informers/generic/internal/fixtures"
	"github.com/generic-informers/generic/internal/share"
)

// unstructuredDecoder is the decoder of mediaType the REST clients of
// UnstructuredFor get from unstructuredSerializer.
func unstructuredDecoder(t *testing.T, mediaType string) runtime.Decoder {
	t.Helper()
	return unstructuredDecoderWith(t, serializer.NewCodecFactory(clientgoscheme.Scheme), share.NewInterner(share.EqualTrees), mediaType)
}

// unstructuredDecoderWith is unstructuredDecoder, of codecs, interning
// with in.
func unstructuredDecoderWith(t testing.TB, codecs serializer.CodecFactory, in *share.Interner, mediaType string) runtime.Decoder {
	t.Helper()
	negotiated := newUnstructuredSerializer(codecs, in)
	decoder, err := runtime.NewClientNegotiator(negotiated, corev1.SchemeGroupVersion).Decoder(mediaType, nil)
	if err != nil {
		t.Fatal(err)
	}
	return decoder
}

// decoded is a decode's outcome in a form cmp.Diff can compare.
type decoded struct {
	Object runtime.Object
	Err    bool
}

// TestJSONToUnstructuredDecodesAsTheDynamicClient: the one-pass JSON
// decoder gives what apimachinery's UnstructuredJSONScheme gives (the
// dynamic client's decoder), for objects, lists (built-in lists whose
// items name no kind, numbers of every kind) and broken input; and a
// metav1.Status as a *metav1.Status, as the dynamic client's serializer
// gives it, for client-go to tell a 410 from other errors.
func TestJSONToUnstructuredDecodesAsTheDynamicClient(t *testing.T) {
	decoder := unstructuredDecoder(t, runtime.ContentTypeJSON)
	for _, fixture := range []string{
		"widget-good.json",
		"widget-bookmark.json",
		"widget-list-good.json",
		"configmap-list.json",
		"list-items-null.json",
		"list-item-not-an-object.json",
		"widget-list-items-not-a-list.json",
		"truncated.json",
		"no-kind.json",
		"status-gone.json",
	} {
		t.Run(fixture, func(t *testing.T) {
			data := readFixture(t, fixture)
			var want decoded
			want.Object, want.Err = dynamicClientDecode(data)
			var got decoded
			obj, _, err := decoder.Decode(data, nil, nil)
			got.Object, got.Err = obj, err != nil
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("decoded (-dynamic client +unstructuredSerializer):\n%s", diff)
			}
		})
	}
}

// dynamicClientDecode decodes data as client-go's dynamic client does: a
// list or an object with UnstructuredJSONScheme; a Status (the one kind
// its scheme knows that an informer meets) into *metav1.Status.
func dynamicClientDecode(data []byte) (runtime.Object, bool) {
	obj, err := runtime.Decode(unstructured.UnstructuredJSONScheme, data)
	if err != nil {
		return nil, true
	}
	if obj.GetObjectKind().GroupVersionKind() == metav1.SchemeGroupVersion.WithKind("Status") {
		status := &metav1.Status{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.(*unstructured.Unstructured).Object, status); err != nil {
			return nil, true
		}
		return status, false
	}
	return obj, false
}

// TestProtobufToUnstructuredEqualsJSON: built-in objects served as
// protobuf, decoded and converted once, equal the same objects served as
// JSON and decoded as the dynamic client does: lists (whose items carry no
// kind) and single objects (watch events), for kinds with every field
// type of the fixtures.
func TestProtobufToUnstructuredEqualsJSON(t *testing.T) {
	codecs := serializer.NewCodecFactory(clientgoscheme.Scheme)
	protobufInfo, _ := runtime.SerializerInfoForMediaType(codecs.SupportedMediaTypes(), runtime.ContentTypeProtobuf)
	jsonInfo, _ := runtime.SerializerInfoForMediaType(codecs.SupportedMediaTypes(), runtime.ContentTypeJSON)
	decoder := unstructuredDecoder(t, runtime.ContentTypeProtobuf)
	pods := typedFixtures[*corev1.Pod](t, "pods.yaml")
	configMaps := typedFixtures[*corev1.ConfigMap](t, "configmaps.yaml")
	for name, obj := range map[string]runtime.Object{
		"a PodList":       &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "9"}, Items: deref(pods)},
		"a ConfigMapList": &corev1.ConfigMapList{ListMeta: metav1.ListMeta{ResourceVersion: "9", Continue: "more"}, Items: deref(configMaps)},
		"a Pod":           withKind(pods[0], "Pod"),
		"a ConfigMap":     withKind(configMaps[0], "ConfigMap"),
		// managedFields, whose fieldsV1 the protobuf path decodes itself.
		"a ConfigMapList with managedFields": benchConfigMapList(3),
		"a ConfigMap with managedFields":     withKind(&benchConfigMapList(1).Items[0], "ConfigMap"),
		// The converter turns a fieldsV1 in CBOR into JSON, as the
		// server does for a JSON client.
		"a ConfigMap whose fieldsV1 is CBOR": configMapWithFieldsV1(t, cborFieldsV1(t)),
	} {
		t.Run(name, func(t *testing.T) {
			jsonData, err := runtime.Encode(codecs.EncoderForVersion(jsonInfo.Serializer, corev1.SchemeGroupVersion), obj)
			if err != nil {
				t.Fatal(err)
			}
			protobufData, err := runtime.Encode(codecs.EncoderForVersion(protobufInfo.Serializer, corev1.SchemeGroupVersion), obj)
			if err != nil {
				t.Fatal(err)
			}
			want, err := runtime.Decode(unstructured.UnstructuredJSONScheme, jsonData)
			if err != nil {
				t.Fatal(err)
			}
			got, _, err := decoder.Decode(protobufData, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("decoded (-JSON, as the dynamic client +protobuf, converted):\n%s", diff)
			}
		})
	}
}

// typedFixtures reads the objects of ../testdata/file as T.
func typedFixtures[T runtime.Object](t testing.TB, file string) []T {
	t.Helper()
	objs, err := fixtures.Load("../testdata/" + file)
	if err != nil {
		t.Fatal(err)
	}
	var out []T
	for _, obj := range objs {
		typedObj, err := clientgoscheme.Scheme.New(obj.GroupVersionKind())
		if err != nil {
			t.Fatal(err)
		}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, typedObj); err != nil {
			t.Fatal(err)
		}
		out = append(out, typedObj.(T))
	}
	if len(out) == 0 {
		t.Fatalf("no objects in %s", file)
	}
	return out
}

func deref[T any](ptrs []*T) []T {
	out := make([]T, len(ptrs))
	for i, p := range ptrs {
		out[i] = *p
	}
	return out
}

// withKind sets obj's kind, as a watch event's object has it.
func withKind(obj runtime.Object, kind string) runtime.Object {
	obj.GetObjectKind().SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind(kind))
	return obj
}

// TestProtobufFieldsV1ReadAsByTheConverter: every fieldsV1 an object comes
// with, in whatever form, is in its unstructured object exactly as
// runtime.DefaultUnstructuredConverter (the decoder without an interner)
// has it, or the object fails to convert where it fails: the interner
// decodes or shares only the fieldsV1 it reads as the converter does.
func TestProtobufFieldsV1ReadAsByTheConverter(t *testing.T) {
	codecs := serializer.NewCodecFactory(clientgoscheme.Scheme)
	withoutInterner := unstructuredDecoderWith(t, codecs, nil, runtime.ContentTypeProtobuf)
	for name, raw := range map[string][]byte{
		"a JSON object":                []byte(`{"f:x":{}}`),
		"CBOR":                         cborFieldsV1(t),
		"not JSON":                     []byte("not json"),
		"a JSON object, data after it": []byte(`{"f:data":{}} x`),
		"a JSON object, cut short":     []byte(`{"f:data":`),
		"a JSON object after a space":  []byte(` {"f:data":{}}`),
		"a JSON list":                  []byte(`[1]`),
		"JSON null":                    []byte("null"),
	} {
		t.Run(name, func(t *testing.T) {
			data := protobufOf(t, codecs, configMapWithFieldsV1(t, raw))
			var want, got decoded
			obj, _, err := withoutInterner.Decode(data, nil, nil)
			want.Object, want.Err = obj, err != nil
			obj, _, err = unstructuredDecoderWith(t, codecs, share.NewInterner(share.EqualTrees), runtime.ContentTypeProtobuf).Decode(data, nil, nil)
			got.Object, got.Err = obj, err != nil
			if diff := cmp.Diff(want, got, compareUndecodable); diff != "" {
				t.Errorf("decoded (-without an interner +with one):\n%s", diff)
			}
		})
	}
}

// configMapWithFieldsV1 is a ConfigMap, with its kind, whose one
// managedFields entry has fieldsV1 raw.
func configMapWithFieldsV1(t *testing.T, raw []byte) runtime.Object {
	t.Helper()
	cm := &benchConfigMapList(1).Items[0]
	cm.ManagedFields[0].FieldsV1.SetRawBytes(raw)
	return withKind(cm, "ConfigMap")
}

// cborFieldsV1 is a fieldsV1 in CBOR, as a CBOR client (KEP-4222) may
// send it.
func cborFieldsV1(t *testing.T) []byte {
	t.Helper()
	fieldsV1 := metav1.FieldsV1{}
	fieldsV1.SetRawString(`{"f:data":{".":{},"f:payload":{}}}`)
	raw, err := fieldsV1.MarshalCBOR()
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// protobufOf is obj encoded as the API server encodes it in protobuf.
func protobufOf(t *testing.T, codecs serializer.CodecFactory, obj runtime.Object) []byte {
	t.Helper()
	info, _ := runtime.SerializerInfoForMediaType(codecs.SupportedMediaTypes(), runtime.ContentTypeProtobuf)
	data, err := runtime.Encode(codecs.EncoderForVersion(info.Serializer, corev1.SchemeGroupVersion), obj)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
