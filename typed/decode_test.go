package typed

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/encoding/protowire"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/internal/widget"
)

// decoders returns the decoder of mediaType the REST client gets from the
// plain codecs, and the one it gets from perItemSerializer, as
// newRESTClient sets them up.
func decoders(t testing.TB, mediaType string) (plain, perItem runtime.Decoder) {
	t.Helper()
	codecs := serializer.NewCodecFactory(widget.NewScheme())
	gv := widget.SchemeGroupVersion
	plain, err := runtime.NewClientNegotiator(codecs.WithoutConversion(), gv).Decoder(mediaType, nil)
	if err != nil {
		t.Fatal(err)
	}
	perItem, err = runtime.NewClientNegotiator(perItemSerializer{NegotiatedSerializer: codecs.WithoutConversion()}, gv).Decoder(mediaType, nil)
	if err != nil {
		t.Fatal(err)
	}
	return plain, perItem
}

func readFixture(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "decode", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// undecodableView is a *generic.Undecodable in a form cmp.Diff can
// compare: Raw compacted if JSON, and only whether Err is set.
type undecodableView struct {
	GVK             schema.GroupVersionKind
	Namespace, Name string
	Raw             string
	HasErr          bool
}

var compareUndecodable = cmp.Transformer("undecodable", func(u *generic.Undecodable) undecodableView {
	raw := u.Raw
	var compact bytes.Buffer
	if json.Compact(&compact, u.Raw) == nil {
		raw = compact.Bytes()
	}
	return undecodableView{GVK: u.GVK, Namespace: u.Namespace, Name: u.Name, Raw: string(raw), HasErr: u.Err != nil}
})

var widgetKind = widget.GVK

func newWidget(namespace, name, resourceVersion string, spec widget.Spec) *widget.Widget {
	return &widget.Widget{
		TypeMeta:   metav1.TypeMeta{APIVersion: "example.com/v1", Kind: "Widget"},
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, ResourceVersion: resourceVersion},
		Spec:       spec,
	}
}

// TestPerItemDecoderJSON: what the plain decoder fails on because of one
// object, perItemDecoder decodes, with an Undecodable in that object's
// place.
func TestPerItemDecoderJSON(t *testing.T) {
	remaining := int64(7)
	tests := []struct {
		name string
		file string
		want runtime.Object
	}{
		{
			name: "list with one bad item among good ones",
			file: "widget-list-one-bad.json",
			want: &metainternalversion.List{
				ListMeta: metav1.ListMeta{ResourceVersion: "42", Continue: "next-page", RemainingItemCount: &remaining},
				Items: []runtime.Object{
					newWidget("team-a", "small", "40", widget.Spec{Size: 1, Color: "blue"}),
					&generic.Undecodable{GVK: widgetKind, Namespace: "team-a", Name: "broken",
						Raw: []byte(`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"broken","namespace":"team-a","resourceVersion":"41"},"spec":{"size":"big","color":"purple"}}`),
						Err: errSet},
					newWidget("team-b", "large", "42", widget.Spec{Size: 10, Color: "red"}),
				},
			},
		},
		{
			name: "list item with unreadable metadata and no kind of its own",
			file: "widget-list-unreadable-item.json",
			want: &metainternalversion.List{
				ListMeta: metav1.ListMeta{ResourceVersion: "43"},
				Items: []runtime.Object{
					&generic.Undecodable{GVK: widgetKind, Raw: []byte(`{"metadata":{"name":5,"namespace":"team-a"},"spec":{"size":1}}`), Err: errSet},
					&widget.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: "team-b", Name: "large"}, Spec: widget.Spec{Size: 10}},
				},
			},
		},
		{
			name: "bad single object",
			file: "widget-bad.json",
			want: &generic.Undecodable{GVK: widgetKind, Namespace: "team-a", Name: "broken",
				Raw: []byte(`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"broken","namespace":"team-a","resourceVersion":"41"},"spec":{"size":"big","color":"purple"}}`),
				Err: errSet},
		},
		{
			name: "single object with unreadable metadata",
			file: "widget-bad-unreadable-metadata.json",
			want: &generic.Undecodable{GVK: widgetKind,
				Raw: []byte(`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":["broken"],"namespace":"team-a"},"spec":{"size":1}}`),
				Err: errSet},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			plain, perItem := decoders(t, runtime.ContentTypeJSON)
			data := readFixture(t, tc.file)
			if _, _, err := plain.Decode(data, nil, nil); err == nil {
				t.Fatalf("the plain decoder decodes %s: not a case for the fallback", tc.file)
			}
			got, _, err := perItem.Decode(data, nil, nil)
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if diff := cmp.Diff(tc.want, got, compareUndecodable); diff != "" {
				t.Errorf("decoded (-want +got):\n%s", diff)
			}
		})
	}
}

// errSet stands for any error in a want: compareUndecodable only tells
// whether Err is set.
var errSet = errors.New("any error")

// TestPerItemDecoderDecodesAsCodecs: input the plain decoder decodes, or
// fails on for a reason other than one object, gives exactly its result.
func TestPerItemDecoderDecodesAsCodecs(t *testing.T) {
	tests := []struct {
		name    string
		file    string
		wantErr bool
	}{
		{name: "good list", file: "widget-list-good.json"},
		{name: "good object", file: "widget-good.json"},
		{name: "bookmark", file: "widget-bookmark.json"},
		{name: "status", file: "status-gone.json"},
		{name: "kind not in the scheme", file: "gadget-unknown-kind.json", wantErr: true},
		{name: "object without kind", file: "widget-no-kind.json", wantErr: true},
		{name: "list with unreadable list metadata", file: "widget-list-bad-metadata.json", wantErr: true},
		{name: "list whose items are not a list", file: "widget-list-items-not-a-list.json", wantErr: true},
		{name: "truncated JSON", file: "truncated.json", wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			plain, perItem := decoders(t, runtime.ContentTypeJSON)
			data := readFixture(t, tc.file)
			for _, defaults := range []*schema.GroupVersionKind{nil, {Version: "v1"}} {
				want, wantGVK, wantErr := plain.Decode(data, defaults, nil)
				got, gotGVK, gotErr := perItem.Decode(data, defaults, nil)
				if (gotErr != nil) != tc.wantErr {
					t.Fatalf("Decode error %v, want an error: %t", gotErr, tc.wantErr)
				}
				if diff := cmp.Diff(errString(wantErr), errString(gotErr)); diff != "" {
					t.Errorf("error (-want +got):\n%s", diff)
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("decoded (-want +got):\n%s", diff)
				}
				if diff := cmp.Diff(wantGVK, gotGVK); diff != "" {
					t.Errorf("decoded kind (-want +got):\n%s", diff)
				}
			}
		})
	}
}

// TestPerItemDecoderKeepsGoodItems: the items of a list that decode are
// decoded exactly as the plain decoder decodes them in a list without the
// bad one.
func TestPerItemDecoderKeepsGoodItems(t *testing.T) {
	tests := []struct {
		name      string
		mediaType string
		withBad   []byte
		goodOnly  []byte
	}{
		{name: "JSON", mediaType: runtime.ContentTypeJSON,
			withBad: readFixture(t, "widget-list-one-bad.json"), goodOnly: readFixture(t, "widget-list-good.json")},
		{name: "protobuf", mediaType: runtime.ContentTypeProtobuf,
			withBad:  protobufPodList(t, podMessage(t, "team-a", "web-0"), brokenPodMessage(t, "team-a", "broken"), podMessage(t, "team-b", "web-1")),
			goodOnly: protobufPodList(t, podMessage(t, "team-a", "web-0"), podMessage(t, "team-b", "web-1"))},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			plain, perItem := decoders(t, tc.mediaType)
			goodList, _, err := plain.Decode(tc.goodOnly, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			want, err := meta.ExtractList(goodList)
			if err != nil {
				t.Fatal(err)
			}
			list, _, err := perItem.Decode(tc.withBad, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			items, err := meta.ExtractList(list)
			if err != nil {
				t.Fatal(err)
			}
			var got []runtime.Object
			for _, item := range items {
				if _, bad := item.(*generic.Undecodable); !bad {
					got = append(got, item)
				}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("good items (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(len(want)+1, len(items)); diff != "" {
				t.Errorf("items (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPerItemDecoderProtobuf: built-in resources come as protobuf; an item
// whose message does not decode is an Undecodable named from its
// ObjectMeta, read straight from the wire.
func TestPerItemDecoderProtobuf(t *testing.T) {
	podKind := corev1.SchemeGroupVersion.WithKind("Pod")
	broken := brokenPodMessage(t, "team-a", "broken")
	tests := []struct {
		name string
		data []byte
		want runtime.Object
	}{
		{
			name: "list with one bad item",
			data: protobufPodList(t, podMessage(t, "team-a", "web-0"), broken),
			want: &metainternalversion.List{
				ListMeta: metav1.ListMeta{ResourceVersion: "42"},
				Items: []runtime.Object{
					decodedPod(t, "team-a", "web-0"),
					&generic.Undecodable{GVK: podKind, Namespace: "team-a", Name: "broken", Raw: broken, Err: errSet},
				},
			},
		},
		{
			name: "bad single object",
			data: protobufObject(t, podKind, broken),
			want: &generic.Undecodable{GVK: podKind, Namespace: "team-a", Name: "broken", Raw: protobufObject(t, podKind, broken), Err: errSet},
		},
		{
			name: "single object with unreadable metadata",
			data: protobufObject(t, podKind, []byte{0x0a, 0x05, 0x0a}), // metadata longer than the message
			want: &generic.Undecodable{GVK: podKind, Raw: protobufObject(t, podKind, []byte{0x0a, 0x05, 0x0a}), Err: errSet},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			plain, perItem := decoders(t, runtime.ContentTypeProtobuf)
			if _, _, err := plain.Decode(tc.data, nil, nil); err == nil {
				t.Fatal("the plain decoder decodes it: not a case for the fallback")
			}
			got, _, err := perItem.Decode(tc.data, nil, nil)
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if diff := cmp.Diff(tc.want, got, compareUndecodable); diff != "" {
				t.Errorf("decoded (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPerItemDecoderLeavesIntoAlone: decoding into a caller's object keeps
// the plain decoder's error; a substitute would leave the caller's object
// as it was, with no error.
func TestPerItemDecoderLeavesIntoAlone(t *testing.T) {
	plain, perItem := decoders(t, runtime.ContentTypeJSON)
	data := readFixture(t, "widget-bad.json")
	_, _, wantErr := plain.Decode(data, nil, &widget.Widget{})
	_, _, gotErr := perItem.Decode(data, nil, &widget.Widget{})
	if gotErr == nil {
		t.Fatal("Decode into a Widget succeeded")
	}
	if diff := cmp.Diff(errString(wantErr), errString(gotErr)); diff != "" {
		t.Errorf("error (-want +got):\n%s", diff)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// podMessage returns the protobuf message of a Pod, as it is an item of a
// list.
func podMessage(t testing.TB, namespace, name string) []byte {
	t.Helper()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, ResourceVersion: "40"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx:1.29"}}},
	}
	message, err := pod.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return message
}

// brokenPodMessage is a Pod message followed by a spec (field 2) of the
// wrong wire type, which the Pod's Unmarshal rejects: protobuf's analog of
// a string where an integer belongs.
func brokenPodMessage(t testing.TB, namespace, name string) []byte {
	t.Helper()
	message := protowire.AppendTag(podMessage(t, namespace, name), 2, protowire.VarintType)
	return protowire.AppendVarint(message, 1)
}

// decodedPod is what the plain protobuf decoder makes of
// podMessage(namespace, name).
func decodedPod(t *testing.T, namespace, name string) *corev1.Pod {
	t.Helper()
	plain, _ := decoders(t, runtime.ContentTypeProtobuf)
	obj, _, err := plain.Decode(protobufObject(t, corev1.SchemeGroupVersion.WithKind("Pod"), podMessage(t, namespace, name)), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return obj.(*corev1.Pod)
}

// protobufPodList encodes a PodList of resourceVersion 42 holding items
// (Pod messages) as the API server does: the prefix, then a runtime.Unknown
// around the list's message.
func protobufPodList(t testing.TB, items ...[]byte) []byte {
	t.Helper()
	listMeta := metav1.ListMeta{ResourceVersion: "42"}
	metaMessage, err := listMeta.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	message := protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), metaMessage)
	for _, item := range items {
		message = protowire.AppendBytes(protowire.AppendTag(message, 2, protowire.BytesType), item)
	}
	return protobufObject(t, corev1.SchemeGroupVersion.WithKind("PodList"), message)
}

// protobufObject encodes message, of kind gvk, as the API server does.
func protobufObject(t testing.TB, gvk schema.GroupVersionKind, message []byte) []byte {
	t.Helper()
	apiVersion, kind := gvk.ToAPIVersionAndKind()
	unknown := runtime.Unknown{
		TypeMeta:    runtime.TypeMeta{APIVersion: apiVersion, Kind: kind},
		Raw:         message,
		ContentType: runtime.ContentTypeProtobuf,
	}
	data, err := unknown.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return append([]byte("k8s\x00"), data...)
}
