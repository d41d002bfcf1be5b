package typed

import (
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/generic-informers/generic"
)

// InformerFor returns a Handle on the shared informer of Go type T,
// creating it on first use; every call for the same T and selection shares
// the same informer, and each is one hold, which the Handle's Release
// drops. Informers asked for after Start run at once.
//
// T's GroupVersionKind comes from the factory's scheme, which must also
// know T's list kind (the "...List" type next to it), and its resource
// from Clients.RESTMapper or discovery. A kind the server does not serve
// yet (its CRD not installed) gets an informer all the same, named by the
// resource guessed from the kind: it is NotServed, asks discovery again
// with backoff, and syncs once the kind is served (see unserved_kind.go).
// opts are the informer's own
// Options, which follow the factory's and override them, as
// controller-runtime's cache.ByObject does (see generic.Factory.Acquire):
// generic.WithNamespace, generic.WithLabelSelector, generic.WithTransform,
// generic.WithIndexers, ... The same resource with another namespace or
// selector is another informer.
//
// It fails, without side effects, if T is not registered, is registered
// under more than one kind, the factory has no way to find resources (no
// RESTMapper and no Config), discovery fails otherwise than by not
// knowing the kind, or an Option is invalid.
func InformerFor[T generic.Object](factory *Factory, opts ...generic.InformerOption) (generic.Handle[T], error) {
	if factory == nil {
		return nil, fmt.Errorf("typed: nil Factory")
	}
	gvk, err := kindOf[T](factory.scheme)
	if err != nil {
		return nil, err
	}
	gvr, err := factory.resourceFor(gvk)
	if err != nil {
		return nil, err
	}
	typ := reflect.TypeFor[T]()
	gf, err := genericFactoryFor(factory, factoryKey{goType: typ}, gvk, typ, generic.FromUnstructured[T]())
	if err != nil {
		return nil, err
	}
	return gf.Acquire(gvr, opts...)
}

// kindOf returns the one external GroupVersionKind the scheme registers for
// the Go type T, and checks that its list kind is registered too.
func kindOf[T generic.Object](scheme *runtime.Scheme) (schema.GroupVersionKind, error) {
	typ := reflect.TypeFor[T]()
	if typ.Kind() != reflect.Pointer {
		return schema.GroupVersionKind{}, fmt.Errorf("typed: %v is not a pointer type", typ)
	}
	var kinds []schema.GroupVersionKind
	for gvk, known := range scheme.AllKnownTypes() {
		if known == typ.Elem() && gvk.Version != runtime.APIVersionInternal {
			kinds = append(kinds, gvk)
		}
	}
	switch {
	case len(kinds) == 0:
		return schema.GroupVersionKind{}, fmt.Errorf("typed: %v is not registered in the scheme", typ)
	case len(kinds) > 1:
		return schema.GroupVersionKind{}, fmt.Errorf("typed: %v is registered as %v; register it under one kind only", typ, kinds)
	}
	gvk := kinds[0]
	if list := gvk.GroupVersion().WithKind(gvk.Kind + "List"); !scheme.Recognizes(list) {
		return schema.GroupVersionKind{}, fmt.Errorf("typed: %v is registered as %v but its list kind %v is not", typ, gvk, list)
	}
	return gvk, nil
}

// mappingFor resolves the resource of gvk, records its scope and returns it.
func (f *Factory) mappingFor(gvk schema.GroupVersionKind) (*meta.RESTMapping, error) {
	if f.kinds == nil {
		return nil, fmt.Errorf("typed: no RESTMapper to find the resource of %v; set Clients.RESTMapper or Clients.Config", gvk)
	}
	mapping, err := f.kinds.mappingFor(gvk)
	if err != nil {
		return nil, fmt.Errorf("typed: resource of %v: %w", gvk, err)
	}
	if mapping == nil || mapping.Scope == nil {
		return nil, fmt.Errorf("typed: the RESTMapper gave %v no resource or no scope", gvk)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.scopes[mapping.Resource] = mapping.Scope.Name()
	return mapping, nil
}

// genericFactoryFor returns the generic.Factory under key, making it on
// first use: fed by a typed REST client of gvk's GroupVersion that decodes
// into goType, or, with a dynamic client, converted at ingest by
// fromUnstructured.
func genericFactoryFor[T generic.Object](f *Factory, key factoryKey, gvk schema.GroupVersionKind, goType reflect.Type, fromUnstructured generic.Converter[T]) (*generic.Factory[T], error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.clients.Dynamic != nil {
		return factoryFor(f, key, generic.DynamicSource(f.clients.Dynamic), fromUnstructured)
	}
	client, err := f.restClientFor(gvk.GroupVersion(), supportsProtobuf(goType))
	if err != nil {
		return nil, err
	}
	return factoryFor[T](f, key, restSource(client), nil)
}
