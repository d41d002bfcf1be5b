package objectedit

import (
	"reflect"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/generic-informers/generic/internal/heaptest"
)

// TestStripManagedFieldsKeepsMetadataSmall runs the ingest's edit of
// WithStripManagedFields: managedFields go and nothing else does, and an
// unstructured object's metadata is a new map exactly when it had more
// entries than a small Go map holds and now has no more (a CustomResource's
// nine fields), so that it does not keep a table of sixteen slots.
func TestStripManagedFieldsKeepsMetadataSmall(t *testing.T) {
	managed := []any{map[string]any{"manager": "kubectl", "operation": "Apply", "fieldsV1": map[string]any{"f:spec": map[string]any{}}}}
	metadataOf := func(n int, withManaged bool) map[string]any {
		md := map[string]any{"name": "w", "namespace": "ns"}
		for i := len(md); i < n; i++ {
			md["field-"+string(rune('a'+i))] = "v"
		}
		if withManaged {
			md["managedFields"] = managed
		}
		return md
	}
	tests := []struct {
		name         string
		obj          any
		want         any
		wantReplaced bool
	}{
		{
			name: "nine fields: metadata made small",
			obj:  &unstructured.Unstructured{Object: map[string]any{"kind": "Widget", "metadata": metadataOf(8, true)}},
			want: &unstructured.Unstructured{Object: map[string]any{"kind": "Widget", "metadata": metadataOf(8, false)}}, wantReplaced: true,
		},
		{
			name: "seven fields: already small, kept",
			obj:  &unstructured.Unstructured{Object: map[string]any{"kind": "ConfigMap", "metadata": metadataOf(6, true)}},
			want: &unstructured.Unstructured{Object: map[string]any{"kind": "ConfigMap", "metadata": metadataOf(6, false)}},
		},
		{
			name: "ten fields: still a table, kept",
			obj:  &unstructured.Unstructured{Object: map[string]any{"kind": "Widget", "metadata": metadataOf(9, true)}},
			want: &unstructured.Unstructured{Object: map[string]any{"kind": "Widget", "metadata": metadataOf(9, false)}},
		},
		{
			name: "nine fields, no managedFields: kept",
			obj:  &unstructured.Unstructured{Object: map[string]any{"kind": "Widget", "metadata": metadataOf(9, false)}},
			want: &unstructured.Unstructured{Object: map[string]any{"kind": "Widget", "metadata": metadataOf(9, false)}},
		},
		{
			name: "no metadata",
			obj:  &unstructured.Unstructured{Object: map[string]any{"kind": "Widget"}},
			want: &unstructured.Unstructured{Object: map[string]any{"kind": "Widget"}},
		},
		{
			name: "metadata not an object",
			obj:  &unstructured.Unstructured{Object: map[string]any{"kind": "Widget", "metadata": "x"}},
			want: &unstructured.Unstructured{Object: map[string]any{"kind": "Widget", "metadata": "x"}},
		},
		{
			name: "typed object",
			obj:  &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c", ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}}},
			want: &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c"}},
		},
		{
			name: "not an object",
			obj:  "a string",
			want: "a string",
		},
	}
	edit := ForIngest(true, false)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := metadataPointer(tc.obj)
			edit(tc.obj)
			got := tc.obj
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("stripped (-want +got):\n%s", diff)
			}
			if replaced := metadataPointer(got) != before; replaced != tc.wantReplaced {
				t.Errorf("metadata a new map: %v, want %v", replaced, tc.wantReplaced)
			}
		})
	}
}

// metadataPointer returns where the metadata map of obj, an
// *unstructured.Unstructured, is; nil for anything else.
func metadataPointer(obj any) any {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok || u == nil {
		return nil
	}
	md, ok := u.Object["metadata"].(map[string]any)
	if !ok {
		return nil
	}
	return reflect.ValueOf(md).UnsafePointer()
}

// TestIngestEditLeavesMapsSmall runs the ingest's edits (stripped
// managedFields, labels of its own for a transform) on objects whose
// metadata has eight fields once edited, with two or eight top-level
// fields, and measures the live heap they hold against the same objects
// made as the edit leaves them: equal, within a few bytes an object. A
// full small Go map set in place turns into a table for good
// (Entries): the remade metadata got its labels twice, and when
// the copy came to them last the map was full (some objects kept a table
// of sixteen slots); the labels of its own were set in a full metadata map
// (every object); and a remade metadata was set in place in a full
// top-level map.
func TestIngestEditLeavesMapsSmall(t *testing.T) {
	const objects = 4000
	// slack is what two measures of a live heap differ by with nothing
	// changed, and more: a few KiB, a byte or two an object.
	const slack = 16
	sharedLabels := map[string]any{"app": "a"}
	type shape struct{ managed, sharedLabels, wide bool }
	build := func(s shape) []*unstructured.Unstructured {
		objs := make([]*unstructured.Unstructured, objects)
		for i := range objs {
			md := map[string]any{
				"name": "w-" + strconv.Itoa(i), "namespace": "ns", "uid": "u", "resourceVersion": "1",
				"generation": int64(1), "creationTimestamp": "2026-12-01T10:00:00Z",
				"labels": map[string]any{"app": "a"}, "annotations": map[string]any{"note": "n"},
			}
			if s.sharedLabels {
				md["labels"] = sharedLabels
			}
			if s.managed {
				md["managedFields"] = []any{map[string]any{"manager": "kubectl"}}
			}
			top := map[string]any{"kind": "Widget", "metadata": md}
			if s.wide {
				for _, field := range []string{"apiVersion", "spec", "status", "data", "binaryData", "immutable"} {
					top[field] = "v"
				}
			}
			objs[i] = &unstructured.Unstructured{Object: top}
		}
		return objs
	}
	tests := []struct {
		name               string
		strip, transformed bool
		before             shape
	}{
		{"stripped", true, false, shape{managed: true}},
		{"labels of its own for a transform", false, true, shape{sharedLabels: true}},
		{"both", true, true, shape{managed: true, sharedLabels: true}},
		{"stripped, eight top-level fields", true, false, shape{managed: true, wide: true}},
		{"labels of its own, eight top-level fields", false, true, shape{sharedLabels: true, wide: true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			edit := ForIngest(tc.strip, tc.transformed)
			got := build(tc.before)[0]
			edit(got)
			asEdited := shape{wide: tc.before.wide}
			if diff := cmp.Diff(build(asEdited)[0], got); diff != "" {
				t.Errorf("edited (-want +got):\n%s", diff)
			}
			made := heaptest.Of(func() any { return build(asEdited) }) / objects
			edited := heaptest.Of(func() any {
				objs := build(tc.before)
				for _, obj := range objs {
					edit(obj)
				}
				return objs
			}) / objects
			t.Logf("%d B an object made as edited, %d B edited", made, edited)
			if edited > made+slack {
				t.Errorf("edited objects hold %d B an object, %d B more than the same made as edited", edited, edited-made)
			}
		})
	}
}
