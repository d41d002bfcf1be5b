package objectedit

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// StripManagedFields drops metadata.managedFields from obj, which is not a
// nil pointer (generic.WithStripManagedFields). An
// *unstructured.Unstructured whose metadata had more entries than a small
// Go map holds, and now has no more, gets its metadata as a new small map:
// deleting an entry frees nothing, so a CustomResource's nine metadata
// fields (name, namespace, uid, resourceVersion, generation,
// creationTimestamp, labels, annotations and managedFields) would keep a
// table of sixteen slots for eight entries, about 330 bytes an object of
// the savings stripping is for. The new map holds the same entries (the
// same values: nothing is copied but the map). Objects of other types are
// left as they are.
func StripManagedFields(obj any) {
	switch o := obj.(type) {
	case *unstructured.Unstructured:
		stripUnstructured(o)
	case metav1.Object:
		o.SetManagedFields(nil)
	}
}

// stripUnstructured is StripManagedFields for an
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
	if had <= Entries || len(metadata) > Entries {
		return
	}
	u.Object, _ = Set(u.Object, "metadata", Remake(metadata, "labels"))
}
