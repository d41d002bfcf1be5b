package objectedit

import (
	"maps"
	"reflect"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// OwnLabels gives obj a metadata.labels map of its own, so that a
// transform may edit it in place: the decoders of typed.UnstructuredFor
// make objects with equal labels share one map, and those of the typed
// informers objects with equal maps of strings (a cached object is
// read-only, but a transform edits an object before it is cached). A typed
// object (a metav1.Object) gets annotations of its own too. Objects of
// other types are left as they are. The maps it writes to in an
// *unstructured.Unstructured are set with Set: a full small map set in
// place would turn into a table for good.
func OwnLabels(obj any) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		ownTypedMaps(obj)
		return
	}
	if u == nil {
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

// ownTypedMaps gives a typed object labels and annotations of its own.
func ownTypedMaps(obj any) {
	o, ok := obj.(metav1.Object)
	if v := reflect.ValueOf(o); !ok || v.Kind() == reflect.Pointer && v.IsNil() {
		return
	}
	if labels := o.GetLabels(); labels != nil {
		o.SetLabels(maps.Clone(labels))
	}
	if annotations := o.GetAnnotations(); annotations != nil {
		o.SetAnnotations(maps.Clone(annotations))
	}
}
