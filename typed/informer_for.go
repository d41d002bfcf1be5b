package typed

import (
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/generic-informers/generic"
)

// InformerOption changes how InformerFor finds the resource of T.
type InformerOption func(*informerOptions)

type informerOptions struct {
	mapping *meta.RESTMapping
	// options are the informer's own, over the factory's.
	options []generic.Option
}

func resolveInformerOptions(opts []InformerOption) informerOptions {
	var o informerOptions
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	return o
}

// WithResource names the resource of T explicitly instead of asking the
// RESTMapper, with its scope (meta.RESTScopeNamespace or meta.RESTScopeRoot;
// nil means namespaced). Use it for a Go type served at more than one
// resource, or with Clients that have no RESTMapper.
func WithResource(gvr schema.GroupVersionResource, scope meta.RESTScope) InformerOption {
	return func(o *informerOptions) {
		if scope == nil {
			scope = meta.RESTScopeNamespace
		}
		o.mapping = &meta.RESTMapping{Resource: gvr, Scope: scope}
	}
}

// WithOptions gives the informer Options of its own, which follow the
// factory's and override them, as controller-runtime's cache.ByObject does
// (see generic.Factory.Acquire): generic.WithNamespace,
// generic.WithLabelSelector, generic.WithFieldSelector, generic.WithTransform,
// generic.WithStripManagedFields, generic.WithIndexers, ... The same resource
// with another namespace or selector is another informer.
func WithOptions(opts ...generic.Option) InformerOption {
	return func(o *informerOptions) { o.options = append(o.options, opts...) }
}

// InformerFor returns a Handle on the shared informer of Go type T,
// creating it on first use; every call for the same T and resource shares
// the same informer, and each is one hold, which the Handle's Release drops.
// Call factory.Start to run informers created after the last Start.
//
// T's GroupVersionKind comes from the factory's scheme, which must also
// know T's list kind (the "...List" type next to it), and its resource from
// the RESTMapper or WithResource. It fails, without side effects, if T is
// not registered, is registered under more than one kind, or has no
// resource.
func InformerFor[T generic.Object](factory *Factory, opts ...InformerOption) (generic.Handle[T], error) {
	if factory == nil {
		return nil, fmt.Errorf("typed: nil Factory")
	}
	o := resolveInformerOptions(opts)
	gvk, err := kindOf[T](factory.scheme)
	if err != nil {
		return nil, err
	}
	mapping, err := factory.mappingFor(gvk, o.mapping)
	if err != nil {
		return nil, err
	}
	typ := reflect.TypeFor[T]()
	key := factoryKey{goType: typ}
	gf, err := genericFactoryFor(factory, key, gvk, typ, generic.FromUnstructured[T]())
	if err != nil {
		return nil, err
	}
	if o.mapping == nil {
		factory.recordResource(key, mapping.Resource)
	}
	return gf.Acquire(mapping.Resource, o.options...), nil
}

// recordResource records the resource the RESTMapper gave for key when an
// informer of it was handed out, which Release without WithResource then
// uses instead of asking the RESTMapper again.
func (f *Factory) recordResource(key factoryKey, gvr schema.GroupVersionResource) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.resources[key] = gvr
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
func (f *Factory) mappingFor(gvk schema.GroupVersionKind, explicit *meta.RESTMapping) (*meta.RESTMapping, error) {
	mapping := explicit
	if mapping == nil {
		if f.kinds == nil {
			return nil, fmt.Errorf("typed: no RESTMapper to find the resource of %v; use WithResource", gvk)
		}
		var err error
		mapping, err = f.kinds.mappingFor(gvk)
		if err != nil {
			return nil, fmt.Errorf("typed: resource of %v: %w", gvk, err)
		}
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
	var source generic.Source
	var convert generic.Converter[T]
	if f.clients.Dynamic != nil {
		source = generic.DynamicSource(f.clients.Dynamic)
		convert = fromUnstructured
	} else {
		client, err := f.restClientFor(gvk.GroupVersion(), supportsProtobuf(goType))
		if err != nil {
			return nil, err
		}
		source = restSource(client)
	}
	source = ignoreNamespaceWhenClusterScoped(source, f.clusterScoped)
	return factoryFor(f, key, func() *generic.Factory[T] {
		return generic.NewFactory(source, convert, f.opts...)
	})
}
