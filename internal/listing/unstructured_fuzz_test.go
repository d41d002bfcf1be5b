package listing

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// FuzzListUnstructuredMatchesAsGetLabels: for any objects and any label
// selector, the List of *unstructured.Unstructured, which matches labels in
// place, batch by batch, remembering the labels map it last found valid,
// returns exactly the objects client-go's ListAll returns, which matches
// each object's GetLabels copy: whatever metadata and metadata.labels hold
// (absent, null, not a map, values that are not strings).
//
// objects is a JSON array of objects; each is listed repeat times in a row
// (repeat from 1 to 200), so that lists cross batches (matchBatch) and the
// same labels map comes again and again, as when the decoders share it.
func FuzzListUnstructuredMatchesAsGetLabels(f *testing.F) {
	for _, seed := range []struct {
		selector string
		objects  string
		repeat   uint8
	}{
		{"app=web", `[{"metadata":{"labels":{"app":"web"}}},{"metadata":{"labels":{"app":"db"}}}]`, 1},
		{"app", `[{"metadata":{"labels":{"app":null}}},{"metadata":{"labels":{"app":1}}},{"metadata":{"labels":null}}]`, 70},
		{"!tier,app in (web,db)", `[{"metadata":{"labels":{"app":"db","tier":"x"}}},{"metadata":"nope"},{"metadata":{"labels":["app"]}},{}]`, 3},
		{"app!=web", `[{"metadata":{"labels":{}}},{"metadata":{"labels":{"app":"web","n":{"a":"b"}}}},{"metadata":{"labels":{"app":"x"}}}]`, 65},
		{"", `[{"metadata":{"labels":{"app":"web"}}}]`, 2},
		{"n>1", `[{"metadata":{"labels":{"n":"2"}}},{"metadata":{"labels":{"n":"x"}}}]`, 1},
	} {
		f.Add(seed.selector, []byte(seed.objects), seed.repeat)
	}
	f.Fuzz(func(t *testing.T, selectorText string, objects []byte, repeat uint8) {
		selector, err := labels.Parse(selectorText)
		if err != nil {
			return
		}
		var decoded []any
		if utiljson.Unmarshal(objects, &decoded) != nil {
			return
		}
		var items []any
		for _, d := range decoded {
			content, ok := d.(map[string]any)
			if !ok {
				continue
			}
			u := &unstructured.Unstructured{Object: content}
			for range 1 + int(repeat)%200 {
				items = append(items, u)
			}
		}

		var want []any
		for _, item := range items {
			if selector.Matches(labels.Set(item.(*unstructured.Unstructured).GetLabels())) {
				want = append(want, item)
			}
		}
		var got []any
		if err := appendMatching(items, selector, selector.Empty(), func(obj any) { got = append(got, obj) }); err != nil {
			t.Fatalf("appendMatching: %v", err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("listed (-GetLabels, as client-go +in place):\n%s", diff)
		}
	})
}
