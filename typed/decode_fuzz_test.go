package typed

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/internal/widget"
)

// FuzzPerItemDecoder: for any input, JSON or protobuf, the typed
// informers' decoder never panics; where the plain decoder (the scheme's
// codecs) decodes the input, it gives exactly the plain decoder's result;
// where the plain decoder fails, it gives the plain decoder's error, or a
// *generic.Undecodable, or a list each of whose items is an object of the
// scheme or a *generic.Undecodable: one bad object costs only itself.
//
// The seeds are the JSON fixtures of testdata/decode and protobuf Pods and
// PodLists, good and broken.
func FuzzPerItemDecoder(f *testing.F) {
	for _, data := range jsonDecodeFixtures(f) {
		f.Add(false, data)
	}
	podKind := corev1.SchemeGroupVersion.WithKind("Pod")
	good, broken := podMessage(f, "team-a", "web-0"), brokenPodMessage(f, "team-a", "broken")
	for _, data := range [][]byte{
		protobufPodList(f, good, broken),
		protobufPodList(f, good),
		protobufObject(f, podKind, good),
		protobufObject(f, podKind, broken),
	} {
		f.Add(true, data)
	}
	plainJSON, perItemJSON := decoders(f, runtime.ContentTypeJSON)
	plainProtobuf, perItemProtobuf := decoders(f, runtime.ContentTypeProtobuf)
	scheme := widget.NewScheme() // the decoders' scheme
	f.Fuzz(func(t *testing.T, protobuf bool, data []byte) {
		plain, perItem := plainJSON, perItemJSON
		if protobuf {
			plain, perItem = plainProtobuf, perItemProtobuf
		}
		want, wantGVK, wantErr := plain.Decode(data, nil, nil)
		got, gotGVK, gotErr := perItem.Decode(data, nil, nil)
		if wantErr == nil {
			if diff := cmp.Diff(decodeResult{want, wantGVK, ""}, decodeResult{got, gotGVK, errString(gotErr)}); diff != "" {
				t.Fatalf("the plain decoder decodes it; decoded (-plain +per item):\n%s", diff)
			}
			return
		}
		if gotErr != nil {
			if diff := cmp.Diff(errString(wantErr), errString(gotErr)); diff != "" {
				t.Errorf("error (-plain +per item):\n%s", diff)
			}
			return
		}
		if _, ok := got.(*generic.Undecodable); ok {
			return
		}
		items, err := meta.ExtractList(got)
		if err != nil {
			t.Fatalf("the plain decoder fails (%v); the per-item decoder gives a %T, neither an Undecodable nor a list", wantErr, got)
		}
		for i, item := range items {
			if _, ok := item.(*generic.Undecodable); ok {
				continue
			}
			if _, _, err := scheme.ObjectKinds(item); err != nil {
				t.Errorf("item %d is a %T, neither an object of the scheme nor an Undecodable: %v", i, item, err)
			}
		}
	})
}

// decodeResult is a Decode's outcome in a form cmp.Diff can compare.
type decodeResult struct {
	Object runtime.Object
	GVK    *schema.GroupVersionKind
	Err    string
}
