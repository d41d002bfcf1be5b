package generic_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/generic-informers/generic"
)

// TestIngestEditsDoNotRaceTheRecord sends a burst of updates of one
// CustomResource to informers that strip managedFields, transform, or both:
// the ingest's record of last good states reads each object it hands on
// (its name, from its metadata map) while the reflector works on it, so
// every edit of an *unstructured.Unstructured (the stripped managedFields,
// a remade metadata map, labels of its own for a transform, and the user's
// transform, which may remove fields of metadata) must be done before it is
// handed on. Run with -race: the detector fails
// the test if they are not. The cache ends with the last update, edited.
func TestIngestEditsDoNotRaceTheRecord(t *testing.T) {
	gvr := schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}
	widget := func(rv int, managed bool, annotated bool) *unstructured.Unstructured {
		metadata := map[string]any{
			"name": "w", "namespace": "ns", "uid": "u-1", "resourceVersion": strconv.Itoa(rv), "generation": int64(1),
			"creationTimestamp": "2026-12-01T10:00:00Z", "labels": map[string]any{"app": "web"},
		}
		if annotated {
			metadata["annotations"] = map[string]any{"note": "n"}
		}
		if managed {
			metadata["managedFields"] = []any{map[string]any{"manager": "m", "operation": "Update"}}
		}
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "example.com/v1", "kind": "Widget", "metadata": metadata,
			"spec": map[string]any{"size": int64(rv)},
		}}
	}
	// A fake watch holds at most 100 events.
	const updates = 90
	identity := func(obj any) (any, error) { return obj, nil }
	// What users write to slim unstructured caches: fields of metadata
	// removed, in place.
	slim := func(obj any) (any, error) {
		u := obj.(*unstructured.Unstructured)
		u.SetManagedFields(nil)
		u.SetAnnotations(nil)
		return u, nil
	}
	tests := []struct {
		name                     string
		opts                     []generic.InformerOption
		wantManaged, wantAnnotes bool
	}{
		{name: "strip", opts: []generic.InformerOption{generic.WithStripManagedFields()}, wantAnnotes: true},
		{name: "transform", opts: []generic.InformerOption{generic.WithTransform(identity)}, wantManaged: true, wantAnnotes: true},
		{name: "strip and transform", opts: []generic.InformerOption{generic.WithStripManagedFields(), generic.WithTransform(identity)}, wantAnnotes: true},
		{name: "transform removing metadata fields", opts: []generic.InformerOption{generic.WithTransform(slim)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			list := &unstructured.UnstructuredList{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "WidgetList"}}
			list.SetResourceVersion("1")
			list.Items = []unstructured.Unstructured{*widget(1, true, true)}
			lw := newScriptedListerWatcher(list)
			informer := newInformer[*unstructured.Unstructured](lw, gvr, nil, tc.opts...)
			defer runSynced(t, informer)()
			w := lw.nextWatch(t)
			for rv := 2; rv <= updates+1; rv++ {
				w.Modify(widget(rv, true, true))
			}
			want := widget(updates+1, tc.wantManaged, tc.wantAnnotes)
			ctx, cancel := testContext(t)
			defer cancel()
			for {
				got, err := informer.Lister().Namespace("ns").Get("w")
				if err == nil && got.GetResourceVersion() == want.GetResourceVersion() {
					if diff := cmp.Diff(want, got); diff != "" {
						t.Errorf("cached (-want +got):\n%s", diff)
					}
					return
				}
				select {
				case <-ctx.Done():
					t.Fatalf("the cache did not reach resourceVersion %s (last: %v, %v)", want.GetResourceVersion(), got, err)
				case <-time.After(time.Millisecond):
				}
			}
		})
	}
}
