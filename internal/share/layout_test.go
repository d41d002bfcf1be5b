package share

import (
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// TestRemakeForReads interns objects as the drop-in for dynamicinformer
// does at ingest (RemakeForReads) and requires them equal to what they
// were, with new content and metadata maps, and the labels of two objects
// decoded apart one map, or with sharing off their strings shared.
func TestRemakeForReads(t *testing.T) {
	type laidOut struct{ NewContent, NewMetadata, OneLabelsMap, SharedLabelStrings bool }
	cases := []struct {
		name       string
		json       string
		shareTrees bool
		want       laidOut
	}{
		{"a Pod", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"n","labels":{"app":"web","tier":"front"},"managedFields":[{"manager":"m"}]},"spec":{"nodeName":"n1"}}`,
			true, laidOut{NewContent: true, NewMetadata: true, OneLabelsMap: true, SharedLabelStrings: true}},
		{"a Pod, sharing off", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"n","labels":{"app":"web","tier":"front"}},"spec":{"nodeName":"n1"}}`,
			false, laidOut{NewContent: true, NewMetadata: true, SharedLabelStrings: true}},
		{"no labels", `{"kind":"ConfigMap","metadata":{"name":"c"},"data":{"k":"v"}}`,
			true, laidOut{NewContent: true, NewMetadata: true}},
		{"labels not a map", `{"kind":"X","metadata":{"name":"x","labels":["a"]}}`,
			true, laidOut{NewContent: true, NewMetadata: true}},
		{"a label value not a string", `{"kind":"X","metadata":{"name":"x","labels":{"a":1,"b":"c"}}}`,
			true, laidOut{NewContent: true, NewMetadata: true, SharedLabelStrings: true}},
		{"metadata not a map", `{"kind":"X","metadata":"m"}`, true, laidOut{NewContent: true}},
		{"no metadata", `{"kind":"X"}`, true, laidOut{NewContent: true}},
		{"nine metadata entries", `{"kind":"X","metadata":{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"labels":{"k":"v"}}}`,
			true, laidOut{NewContent: true, NewMetadata: true, OneLabelsMap: true, SharedLabelStrings: true}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := NewInterner(sharingOf(c.shareTrees))
			want, first, second := decodeContent(t, c.json), decodeContent(t, c.json), decodeContent(t, c.json)
			beforeMetadata, _ := second["metadata"].(map[string]any)
			first = in.Object(first, RemakeForReads, nil)
			laid := in.Object(second, RemakeForReads, nil)
			if diff := cmp.Diff(want, laid); diff != "" {
				t.Errorf("laid out (-before +after):\n%s", diff)
			}
			if !reflect.DeepEqual(want, laid) {
				t.Error("laid out object is not reflect.DeepEqual to the object before")
			}
			metadata, _ := laid["metadata"].(map[string]any)
			labels, _ := metadata["labels"].(map[string]any)
			firstMetadata, _ := first["metadata"].(map[string]any)
			firstLabels, _ := firstMetadata["labels"].(map[string]any)
			got := laidOut{
				NewContent:         !sameMap(second, laid),
				NewMetadata:        metadata != nil && !sameMap(beforeMetadata, metadata),
				OneLabelsMap:       sameMap(firstLabels, labels),
				SharedLabelStrings: len(labels) > 0 && sharedStrings(labels, firstLabels),
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	if got := NewInterner(EqualTrees).Object(nil, RemakeForReads, nil); got != nil {
		t.Errorf("nil content became %v", got)
	}
}

func decodeContent(t *testing.T, data string) map[string]any {
	t.Helper()
	var content map[string]any
	if err := utiljson.Unmarshal([]byte(data), &content); err != nil {
		t.Fatal(err)
	}
	return content
}

// sharedStrings reports whether the keys and string values of a are, by
// address, the same strings as b's (sameString).
func sharedStrings(a, b map[string]any) bool {
	keys := map[string]string{}
	for k := range b {
		keys[k] = k
	}
	for k, v := range a {
		if !sameString(keys[k], k) {
			return false
		}
		if s, ok := v.(string); ok {
			if other, _ := b[k].(string); !sameString(s, other) {
				return false
			}
		}
	}
	return true
}
