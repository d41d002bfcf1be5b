package typed

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	"github.com/generic-informers/generic/internal/fixtures"
	"github.com/generic-informers/generic/internal/share"
)

// FuzzJSONToUnstructured: for any input, UnstructuredFor's JSON decoder
// (one pass, then interned) gives what the dynamic client's decoder gives,
// or fails where it fails, and never panics; and interning shares without
// changing anything a reader sees: the same input decoded again, by the
// same decoder, whose interner now holds what the first decode left in it,
// is equal too, and the first object is as it was.
//
// The seeds are the decoder's fixtures (testdata/decode) and the equality
// corpus (../testdata/corpus), as JSON; `go test` runs them,
// `go test -fuzz FuzzJSONToUnstructured` mutates them.
func FuzzJSONToUnstructured(f *testing.F) {
	for _, seed := range fuzzSeeds(f) {
		f.Add(seed)
	}
	codecs := serializer.NewCodecFactory(clientgoscheme.Scheme)
	f.Fuzz(func(t *testing.T, data []byte) {
		var want decoded
		want.Object, want.Err = dynamicClientDecode(data)
		checkInternedDecodes(t, codecs, runtime.ContentTypeJSON, data, want, "dynamic client")
	})
}

// fuzzSeeds returns the JSON fixtures of testdata/decode and each object of
// the equality corpus as JSON.
func fuzzSeeds(f *testing.F) [][]byte {
	f.Helper()
	seeds := jsonDecodeFixtures(f)
	objs, err := fixtures.Load("../testdata/corpus/objects.yaml")
	if err != nil {
		f.Fatal(err)
	}
	for _, obj := range objs {
		data, err := obj.MarshalJSON()
		if err != nil {
			f.Fatal(err)
		}
		seeds = append(seeds, data)
	}
	return seeds
}

// FuzzProtobufToUnstructured: for any input, UnstructuredFor's protobuf
// decoder never panics, and what it decodes is what the same decoder
// without an interner decodes: taking managedFields' fieldsV1 out to
// decode or share them (detachFieldsV1), and interning, change nothing a
// reader sees, for the input decoded once or again with what the first
// decode interned, and leave the first object as it was.
//
// The seeds are built-in objects and lists of the fixtures, with and
// without managedFields, as the API server encodes them.
func FuzzProtobufToUnstructured(f *testing.F) {
	codecs := serializer.NewCodecFactory(clientgoscheme.Scheme)
	protobufInfo, _ := runtime.SerializerInfoForMediaType(codecs.SupportedMediaTypes(), runtime.ContentTypeProtobuf)
	encoder := codecs.EncoderForVersion(protobufInfo.Serializer, corev1.SchemeGroupVersion)
	pods := typedFixtures[*corev1.Pod](f, "pods.yaml")
	for _, obj := range []runtime.Object{
		benchConfigMapList(3),
		withKind(&benchConfigMapList(1).Items[0], "ConfigMap"),
		&corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "9"}, Items: deref(pods)},
		withKind(pods[0], "Pod"),
	} {
		data, err := runtime.Encode(encoder, obj)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	withoutInterner := unstructuredDecoderWith(f, codecs, nil, runtime.ContentTypeProtobuf)
	f.Fuzz(func(t *testing.T, data []byte) {
		var want decoded
		obj, _, err := withoutInterner.Decode(data, nil, nil)
		want.Object, want.Err = obj, err != nil
		checkInternedDecodes(t, codecs, runtime.ContentTypeProtobuf, data, want, "without an interner")
	})
}

// checkInternedDecodes decodes data, of mediaType, twice with one
// decoder of UnstructuredFor's, and compares each outcome with want, the
// decode of reference: the second decode shares what the first left in the
// interner, and must leave the first object as it was. The interner's
// tables are tiny, so that inputs with more than a few strings, labels
// maps or fieldsV1 trees also run the paths where a table is full and
// starts again.
func checkInternedDecodes(t *testing.T, codecs serializer.CodecFactory, mediaType string, data []byte, want decoded, reference string) {
	t.Helper()
	in := share.NewInterner(share.EqualTrees)
	in.Bound(4, 1, 1)
	decoder := unstructuredDecoderWith(t, codecs, in, mediaType)
	decode := func() decoded {
		obj, _, err := decoder.Decode(data, nil, nil)
		return decoded{Object: obj, Err: err != nil}
	}
	first := decode()
	if diff := cmp.Diff(want, first, compareUndecodable); diff != "" {
		t.Fatalf("decoded (-%s +with an interner):\n%s", reference, diff)
	}
	if first.Err {
		return
	}
	firstBefore := first.Object.DeepCopyObject()
	if diff := cmp.Diff(want, decode(), compareUndecodable); diff != "" {
		t.Errorf("decoded again, with what the first decode interned (-%s +with an interner):\n%s", reference, diff)
	}
	if diff := cmp.Diff(firstBefore, first.Object, compareUndecodable); diff != "" {
		t.Errorf("the first object changed when the input was decoded again (-before +after):\n%s", diff)
	}
}

// jsonDecodeFixtures returns the contents of the JSON fixtures of
// testdata/decode, the decoders' table tests' inputs.
func jsonDecodeFixtures(f *testing.F) [][]byte {
	f.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", "decode", "*.json"))
	if err != nil || len(paths) == 0 {
		f.Fatalf("no JSON fixtures in testdata/decode (%v)", err)
	}
	var fixtures [][]byte
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		fixtures = append(fixtures, data)
	}
	return fixtures
}
