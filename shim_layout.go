package generic

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/generic-informers/generic/internal/share"
)

// readLayout is the Converter of a GenericInformerFactory[T]: Identity,
// and for T = *unstructured.Unstructured (the drop-in for
// dynamicinformer) each object interned and laid out for reads as it is
// ingested, by one share.Interner for the factory's informers:
//
//   - its strings that repeat across objects (keys, kinds, namespaces,
//     label keys and values, field managers) are one string each, equal
//     managedFields fieldsV1 trees one tree, and equal labels maps one
//     map: what typed.UnstructuredFor's decoders share;
//   - its content and metadata maps are made anew, metadata first and
//     labels first in them (share.RemakeForReads), so that a List with a
//     label selector over the dynamic client's objects costs about what it
//     costs over typed.UnstructuredFor's.
//
// The objects are equal to the dynamic client's. Shared trees are seen by
// a caller who writes into a cached object's labels or fieldsV1 in place,
// which client-go forbids; client-go's own dynamicinformer and
// dynamiclister tests, and the drop-in scripts' projects, pass with them
// (hack/dropin-test.sh).
func readLayout[T Object]() Converter[T] {
	identity := Identity[T]()
	if _, ok := any(*new(T)).(*unstructured.Unstructured); !ok {
		return identity
	}
	interner := share.NewInterner(true)
	return func(obj runtime.Object) (T, error) {
		t, err := identity(obj)
		if err == nil {
			u := any(t).(*unstructured.Unstructured)
			if u != nil {
				u.Object = interner.Object(u.Object, share.RemakeForReads, nil)
			}
		}
		return t, err
	}
}
