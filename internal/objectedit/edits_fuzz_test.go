package objectedit

import (
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// FuzzUnstructuredEdits: the ingest's edits of an *unstructured.Unstructured,
// on any object, do what client-go's accessors would and nothing else.
//
//   - StripManagedFields (generic.WithStripManagedFields) leaves the object equal to
//     one whose managedFields client-go removed (unstructured's
//     SetManagedFields(nil): RemoveNestedField), whatever metadata holds;
//   - OwnLabels (before a transform) leaves it equal to what it was, with a
//     labels map of its own: writing to it changes no map the object
//     shared before.
func FuzzUnstructuredEdits(f *testing.F) {
	for _, seed := range []string{
		`{"metadata":{"name":"w","labels":{"app":"web"},"managedFields":[{"manager":"m"}]}}`,
		`{"metadata":{"name":"w","namespace":"n","uid":"u","resourceVersion":"1","generation":1,"creationTimestamp":"t","labels":{"a":"b"},"annotations":{"c":"d"},"managedFields":[]}}`,
		`{"metadata":{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"labels":{"1":"","2":"","3":"","4":"","5":"","6":"","7":"","8":""}}}`,
		`{"metadata":{"managedFields":null,"labels":null}}`,
		`{"metadata":"not a map"}`,
		`{"metadata":{"labels":["a"]}}`,
		`{}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var content map[string]any
		if utiljson.Unmarshal(data, &content) != nil || content == nil {
			return
		}

		stripped := &unstructured.Unstructured{Object: content}
		want := stripped.DeepCopy()
		unstructured.RemoveNestedField(want.Object, "metadata", "managedFields")
		StripManagedFields(stripped)
		if diff := cmp.Diff(want, stripped); diff != "" {
			t.Errorf("stripped (-client-go's RemoveNestedField +StripManagedFields):\n%s", diff)
		}

		owner := stripped.DeepCopy()
		shared, _, _ := unstructured.NestedFieldNoCopy(owner.Object, "metadata", "labels")
		sharedBefore := owner.DeepCopy()
		OwnLabels(owner)
		if diff := cmp.Diff(sharedBefore, owner); diff != "" {
			t.Errorf("OwnLabels changed the object (-before +after):\n%s", diff)
		}
		own, _, _ := unstructured.NestedFieldNoCopy(owner.Object, "metadata", "labels")
		sharedMap, isMap := shared.(map[string]any)
		if !isMap {
			return
		}
		if reflect.ValueOf(own).UnsafePointer() == reflect.ValueOf(sharedMap).UnsafePointer() {
			t.Fatal("OwnLabels left the object the labels map it shared")
		}
		own.(map[string]any)["written-by-a-transform"] = "x"
		if diff := cmp.Diff(sharedBefore.Object["metadata"].(map[string]any)["labels"], any(sharedMap)); diff != "" {
			t.Errorf("a write to the object's own labels changed the map it shared (-before +after):\n%s", diff)
		}
	})
}
