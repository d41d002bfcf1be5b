package generic

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/generic-informers/generic/internal/smallmap"
)

// stripManagedFields drops metadata.managedFields from obj
// (WithStripManagedFields). An *unstructured.Unstructured whose metadata
// had more entries than a small Go map holds, and now has no more, gets its
// metadata as a new small map: deleting an entry frees nothing, so a
// CustomResource's nine metadata fields (name, namespace, uid,
// resourceVersion, generation, creationTimestamp, labels, annotations and
// managedFields) would keep a table of sixteen slots for eight entries,
// about 330 bytes an object of the savings stripping is for. The new map
// holds the same entries (the same values: nothing is copied but the map).
func stripManagedFields(obj any) {
	switch o := obj.(type) {
	case *unstructured.Unstructured:
		if o != nil {
			stripUnstructured(o)
		}
	case metav1.Object:
		if !isNilPointer(o) {
			o.SetManagedFields(nil)
		}
	}
}

// stripUnstructured is stripManagedFields for an
// *unstructured.Unstructured. A remade metadata map gets metadata.labels
// first, in its first slot, as typed.UnstructuredFor's decoders make it:
// a label selector finds it there with one cache miss fewer.
func stripUnstructured(u *unstructured.Unstructured) {
	metadata, ok := u.Object["metadata"].(map[string]any)
	if !ok {
		return
	}
	if _, ok := metadata["managedFields"]; !ok {
		return
	}
	had := len(metadata)
	delete(metadata, "managedFields")
	if had <= smallmap.Entries || len(metadata) > smallmap.Entries {
		return
	}
	u.Object, _ = smallmap.Set(u.Object, "metadata", smallmap.Remake(metadata, "labels"))
}
