package generic

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// smallMapEntries is the most entries a Go map holds in its small form:
// one group of eight slots behind the map's header (internal/runtime/maps,
// Go 1.24 and later). One more entry turns it into a table with a
// directory and groups for sixteen, about twice the memory, and a map
// that shrinks back under eight entries keeps that table.
const smallMapEntries = 8

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
	if had <= smallMapEntries || len(metadata) > smallMapEntries {
		return
	}
	small := make(map[string]any, len(metadata))
	if labels, ok := metadata["labels"]; ok {
		small["labels"] = labels
	}
	for k, v := range metadata {
		small[k] = v
	}
	u.Object["metadata"] = small
}
