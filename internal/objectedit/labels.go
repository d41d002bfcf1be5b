package objectedit

import (
	"maps"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// OwnLabels gives an *unstructured.Unstructured a metadata.labels map of
// its own, so that a transform may edit it in place: the decoders of
// typed.UnstructuredFor make objects with equal labels share one map (a
// cached object is read-only, but a transform edits an object before it
// is cached). Objects of other types are left as they are. The maps it
// writes to are set with Set: a full small map set in place would turn
// into a table for good.
func OwnLabels(obj any) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok || u == nil {
		return
	}
	metadata, ok := u.Object["metadata"].(map[string]any)
	if !ok {
		return
	}
	labels, ok := metadata["labels"].(map[string]any)
	if !ok {
		return
	}
	if own, remade := Set(metadata, "labels", maps.Clone(labels)); remade {
		u.Object, _ = Set(u.Object, "metadata", own)
	}
}
