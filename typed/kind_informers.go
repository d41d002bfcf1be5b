package typed

import (
	"errors"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/generic-informers/generic"
)

// UnstructuredForKind is UnstructuredFor of the resource of gvk, found as
// InformerForKind finds it (Clients.RESTMapper or discovery), and the kind
// need not be in the factory's scheme. A kind the server does not serve yet
// (its CRD not installed) gets an informer all the same, as
// InformerForKind's: named by the resource guessed from the kind, NotServed
// until the kind is served, then listing the resource and at the scope
// that discovery gives (a cluster-scoped kind ignores the namespace) and
// syncing; later calls for the kind share it, whatever discovery says by
// then. opts are as InformerFor's.
//
// It fails, without side effects, as UnstructuredFor does, on a gvk without
// a version or a kind, when the factory has no way to find resources (no
// RESTMapper and no Config), or when discovery fails otherwise than by not
// knowing the kind.
func UnstructuredForKind(factory *Factory, gvk schema.GroupVersionKind, opts ...generic.InformerOption) (generic.Handle[*unstructured.Unstructured], error) {
	gvr, err := resourceOfKind(factory, gvk)
	if err != nil {
		return nil, err
	}
	return UnstructuredFor(factory, gvr, opts...)
}

// MetadataForKind is MetadataFor of the resource of gvk, found as
// UnstructuredForKind finds it, a kind not served yet included; the kind
// need not be in the factory's scheme. opts are as InformerFor's. It fails
// as UnstructuredForKind does, or as MetadataFor does.
func MetadataForKind(factory *Factory, gvk schema.GroupVersionKind, opts ...generic.InformerOption) (generic.Handle[*metav1.PartialObjectMetadata], error) {
	gvr, err := resourceOfKind(factory, gvk)
	if err != nil {
		return nil, err
	}
	return MetadataFor(factory, gvr, opts...)
}

// resourceOfKind checks factory and gvk and returns gvk's resource
// (Factory.resourceFor).
func resourceOfKind(factory *Factory, gvk schema.GroupVersionKind) (schema.GroupVersionResource, error) {
	if factory == nil {
		return schema.GroupVersionResource{}, errors.New("typed: nil Factory")
	}
	if gvk.Version == "" || gvk.Kind == "" {
		return schema.GroupVersionResource{}, fmt.Errorf("typed: GroupVersionKind %#v: want a version and a kind (the group may be empty, for the core group)", gvk)
	}
	return factory.resourceFor(gvk)
}
