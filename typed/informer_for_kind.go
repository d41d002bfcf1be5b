package typed

import (
	"fmt"
	"reflect"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/generic-informers/generic"
)

// Object is any API object with metadata. Informers of a kind chosen at run
// time (InformerForKind) hold Objects: each one is still of the Go type the
// scheme registers for the kind (a *corev1.ConfigMap, say), decoded straight
// into it.
type Object interface {
	runtime.Object
	metav1.Object
}

// InformerForKind is InformerFor for a kind known only at run time, such as
// one named on a command line. gvk must have a version and a kind, and be
// registered in the factory's scheme with its list kind. Every call for
// the same kind and selection shares the same informer; opts are as
// InformerFor's.
func InformerForKind(factory *Factory, gvk schema.GroupVersionKind, opts ...generic.InformerOption) (generic.Handle[Object], error) {
	if factory == nil {
		return nil, fmt.Errorf("typed: nil Factory")
	}
	if gvk.Version == "" || gvk.Kind == "" {
		return nil, fmt.Errorf("typed: GroupVersionKind %#v: want a version and a kind (the group may be empty, for the core group)", gvk)
	}
	example, err := factory.scheme.New(gvk)
	if err != nil {
		return nil, fmt.Errorf("typed: %w", err)
	}
	if list := gvk.GroupVersion().WithKind(gvk.Kind + "List"); !factory.scheme.Recognizes(list) {
		return nil, fmt.Errorf("typed: %v is registered but its list kind %v is not", gvk, list)
	}
	gvr, err := factory.resourceFor(gvk)
	if err != nil {
		return nil, err
	}
	key := factoryKey{goType: reflect.TypeFor[Object](), gvk: gvk}
	gf, err := genericFactoryFor(factory, key, gvk, reflect.TypeOf(example), schemeConverter(factory.scheme, gvk))
	if err != nil {
		return nil, err
	}
	// The informer's objects are of example's Go type, which the compact
	// store (generic.WithCompactStore) decodes into: its T is an interface.
	return gf.Acquire(gvr, append(slices.Clip(opts), generic.WithExampleObject(example))...)
}

// schemeConverter converts unstructured objects of kind gvk into the Go type
// the scheme registers for it.
func schemeConverter(scheme *runtime.Scheme, gvk schema.GroupVersionKind) generic.Converter[Object] {
	return func(obj runtime.Object) (Object, error) {
		u, ok := obj.(runtime.Unstructured)
		if !ok {
			if typed, ok := obj.(Object); ok {
				return typed, nil
			}
			return nil, fmt.Errorf("%w: got %T, want an unstructured %v", generic.ErrUnexpectedType, obj, gvk)
		}
		into, err := scheme.New(gvk)
		if err != nil {
			return nil, err
		}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.UnstructuredContent(), into); err != nil {
			return nil, fmt.Errorf("from unstructured to %v: %w", gvk, err)
		}
		typed, ok := into.(Object)
		if !ok {
			return nil, fmt.Errorf("%w: %T has no object metadata", generic.ErrUnexpectedType, into)
		}
		return typed, nil
	}
}
