package generic

import (
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
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
			name: "nil unstructured",
			obj:  (*unstructured.Unstructured)(nil),
			want: (*unstructured.Unstructured)(nil),
		},
		{
			name: "nil typed object",
			obj:  (*corev1.ConfigMap)(nil),
			want: (*corev1.ConfigMap)(nil),
		},
		{
			name: "not an object",
			obj:  "a string",
			want: "a string",
		},
	}
	edit := options{stripManaged: true}.ingestEdit()
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
