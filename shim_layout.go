package generic

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/generic-informers/generic/internal/objectedit"
)

// readLayout is the Converter of a GenericInformerFactory[T]: Identity,
// and for T = *unstructured.Unstructured (the drop-in for
// dynamicinformer) each object laid out for reads as it is ingested
// (objectedit.LayOutForReads: its content and metadata maps remade,
// metadata and labels first), so that a List with a label selector over
// the dynamic client's objects costs about what it costs over
// typed.UnstructuredFor's. The objects are equal to the dynamic client's
// (client-go's own dynamicinformer tests run on the drop-in); only two of
// their maps are new.
func readLayout[T Object]() Converter[T] {
	identity := Identity[T]()
	if _, ok := any(*new(T)).(*unstructured.Unstructured); !ok {
		return identity
	}
	return func(obj runtime.Object) (T, error) {
		t, err := identity(obj)
		if err == nil {
			objectedit.LayOutForReads(any(t).(*unstructured.Unstructured))
		}
		return t, err
	}
}
