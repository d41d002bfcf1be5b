package objectedit

import (
	"reflect"
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// TestLayOutForReads lays out objects as the drop-in's ingest does and
// requires them equal to what they were, with new content, metadata and
// labels maps, and the labels' strings shared between two objects decoded
// apart.
func TestLayOutForReads(t *testing.T) {
	cases := []struct {
		name string
		json string
		// want is what the lay-out did: new maps at each level, labels
		// strings shared.
		want laidOut
	}{
		{"a Pod", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"n","labels":{"app":"web","tier":"front"},"managedFields":[{"manager":"m"}]},"spec":{"nodeName":"n1"}}`,
			laidOut{NewContent: true, NewMetadata: true, NewLabels: true, SharedLabelStrings: true}},
		{"no labels", `{"kind":"ConfigMap","metadata":{"name":"c"},"data":{"k":"v"}}`,
			laidOut{NewContent: true, NewMetadata: true}},
		{"labels not a map", `{"kind":"X","metadata":{"name":"x","labels":["a"]}}`,
			laidOut{NewContent: true, NewMetadata: true}},
		{"a label value not a string", `{"kind":"X","metadata":{"name":"x","labels":{"a":1,"b":"c"}}}`,
			laidOut{NewContent: true, NewMetadata: true, NewLabels: true, SharedLabelStrings: true}},
		{"metadata not a map", `{"kind":"X","metadata":"m"}`, laidOut{}},
		{"no metadata", `{"kind":"X"}`, laidOut{}},
		{"nine metadata entries", `{"kind":"X","metadata":{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"labels":{"k":"v"}}}`,
			laidOut{NewContent: true, NewMetadata: true, NewLabels: true, SharedLabelStrings: true}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want, first, second := decode(t, c.json), decode(t, c.json), decode(t, c.json)
			before := *first
			beforeMetadata, _ := first.Object["metadata"].(map[string]any)
			beforeLabels, _ := beforeMetadata["labels"].(map[string]any)
			LayOutForReads(first)
			LayOutForReads(second)
			if diff := cmp.Diff(want, first); diff != "" {
				t.Errorf("laid out (-before +after):\n%s", diff)
			}
			if !reflect.DeepEqual(want, first) {
				t.Error("laid out object is not reflect.DeepEqual to the object before")
			}
			metadata, _ := first.Object["metadata"].(map[string]any)
			labels, _ := metadata["labels"].(map[string]any)
			other, _ := second.Object["metadata"].(map[string]any)
			otherLabels, _ := other["labels"].(map[string]any)
			got := laidOut{
				NewContent:         !sameMapOf(before.Object, first.Object),
				NewMetadata:        metadata != nil && !sameMapOf(beforeMetadata, metadata),
				NewLabels:          labels != nil && !sameMapOf(beforeLabels, labels),
				SharedLabelStrings: len(labels) > 0 && sharedStrings(labels, otherLabels),
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	LayOutForReads(nil) // does nothing, without a panic
}

type laidOut struct{ NewContent, NewMetadata, NewLabels, SharedLabelStrings bool }

func decode(t *testing.T, data string) *unstructured.Unstructured {
	t.Helper()
	var content map[string]any
	if err := utiljson.Unmarshal([]byte(data), &content); err != nil {
		t.Fatal(err)
	}
	return &unstructured.Unstructured{Object: content}
}

func sameMapOf(a, b map[string]any) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

// sharedStrings reports whether every key and string value of a is, by
// address, the same string as b's.
func sharedStrings(a, b map[string]any) bool {
	keys := map[string]string{}
	for k := range b {
		keys[k] = k
	}
	for k, v := range a {
		if unsafe.StringData(keys[k]) != unsafe.StringData(k) {
			return false
		}
		if s, ok := v.(string); ok && unsafe.StringData(s) != unsafe.StringData(b[k].(string)) {
			return false
		}
	}
	return true
}
