package typed

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/gentype"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/internal/writes"
)

// Client reads and writes objects of the Go type T, any type registered in
// the factory's scheme (built-in or a custom resource's), through the API
// server, as a generated typed client does: it is client-go's
// gentype.Client over a REST client of T's GroupVersion, made from the
// factory's Clients.Config, that sends and asks for protobuf when T has a
// protobuf encoding (the built-in types) and JSON otherwise. No code
// generation.
//
// Every method returns the object as the server answered, or the server's
// error as client-go returns it (test it with apimachinery's
// apierrors.IsNotFound, IsConflict, ...). Namespaced resources take the
// namespace of obj or key; for cluster-scoped ones it is ignored.
//
// A write made with a context the controller loop (package controller)
// handed to a reconcile is recorded for that reconcile's key, so that the
// next reconcile of the key starts only once the caches it reads have
// caught up with the write (KEP-5647). Outside a reconcile, nothing is
// recorded.
//
// A Client is safe for concurrent use.
type Client[T generic.Object] struct {
	gvk        schema.GroupVersionKind
	gvr        schema.GroupVersionResource
	namespaced bool
	rest       rest.Interface
	newObject  func() T
	newList    func() runtime.Object
}

// ClientFor returns a Client for T. It fails, without side effects, if T
// is not registered in the factory's scheme under exactly one kind (with
// its list kind), its resource cannot be found (see InformerFor), or the
// factory has no Clients.Config to talk to the server through (a factory
// made over a dynamic client only; generictest.Fake's factory has one).
func ClientFor[T generic.Object](factory *Factory) (*Client[T], error) {
	if factory == nil {
		return nil, fmt.Errorf("typed: nil Factory")
	}
	if factory.clients.Config == nil {
		return nil, fmt.Errorf("typed: ClientFor needs Clients.Config; this factory has none")
	}
	gvk, err := kindOf[T](factory.scheme)
	if err != nil {
		return nil, err
	}
	mapping, err := factory.mappingFor(gvk)
	if err != nil {
		return nil, err
	}
	typ := reflect.TypeFor[T]()
	factory.mu.Lock()
	client, err := factory.writeClientFor(gvk.GroupVersion(), supportsProtobuf(typ))
	factory.mu.Unlock()
	if err != nil {
		return nil, err
	}
	scheme := factory.scheme
	return &Client[T]{
		gvk:        gvk,
		gvr:        mapping.Resource,
		namespaced: mapping.Scope.Name() == meta.RESTScopeNameNamespace,
		rest:       client,
		newObject:  func() T { return reflect.New(typ.Elem()).Interface().(T) },
		newList: func() runtime.Object {
			list, _ := scheme.New(gvk.GroupVersion().WithKind(gvk.Kind + "List")) // kindOf checked it is registered
			return list
		},
	}, nil
}

// writeClientFor returns the shared REST client of gv for reads and writes
// of single objects: it decodes with the scheme's codecs as they are (no
// per-item decoding, which is for informers' lists). f.mu must be held.
func (f *Factory) writeClientFor(gv schema.GroupVersion, protobuf bool) (rest.Interface, error) {
	key := restClientKey{gv: gv, protobuf: protobuf, writes: true}
	if client, ok := f.restClients[key]; ok {
		return client, nil
	}
	client, err := newRESTClientWith(f.clients, f.codecs.WithoutConversion(), gv, protobuf)
	if err != nil {
		return nil, err
	}
	f.restClients[key] = client
	return client, nil
}

// GroupVersionResource returns the resource the client reads and writes.
func (c *Client[T]) GroupVersionResource() schema.GroupVersionResource { return c.gvr }

// in returns client-go's gentype client for namespace.
func (c *Client[T]) in(namespace string) *gentype.ClientWithList[T, runtime.Object] {
	if !c.namespaced {
		namespace = ""
	}
	return gentype.NewClientWithList[T, runtime.Object](c.gvr.Resource, c.rest, metav1.ParameterCodec, namespace, c.newObject, c.newList)
}

// Get returns the object of key.
func (c *Client[T]) Get(ctx context.Context, key cache.ObjectName, opts metav1.GetOptions) (T, error) {
	return c.in(key.Namespace).Get(ctx, key.Name, opts)
}

// List returns the objects of namespace ("" for all namespaces) that opts
// selects, in the server's order.
func (c *Client[T]) List(ctx context.Context, namespace string, opts metav1.ListOptions) ([]T, error) {
	list, err := c.in(namespace).List(ctx, opts)
	if err != nil {
		return nil, err
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return nil, fmt.Errorf("typed: list of %s: %w", c.gvr, err)
	}
	objs := make([]T, 0, len(items))
	for _, item := range items {
		obj, ok := item.(T)
		if !ok {
			return nil, fmt.Errorf("typed: list of %s holds a %T: %w", c.gvr, item, generic.ErrUnexpectedType)
		}
		objs = append(objs, obj)
	}
	return objs, nil
}

// Create creates obj in its namespace.
func (c *Client[T]) Create(ctx context.Context, obj T, opts metav1.CreateOptions) (T, error) {
	if isNil(obj) {
		return obj, fmt.Errorf("typed: Create of a nil %T", obj)
	}
	return c.recorded(ctx)(c.in(obj.GetNamespace()).Create(ctx, obj, opts))
}

// Update replaces the object of obj's namespace and name by obj. The server
// answers 409 Conflict if obj's resourceVersion is not the stored one.
func (c *Client[T]) Update(ctx context.Context, obj T, opts metav1.UpdateOptions) (T, error) {
	if isNil(obj) {
		return obj, fmt.Errorf("typed: Update of a nil %T", obj)
	}
	return c.recorded(ctx)(c.in(obj.GetNamespace()).Update(ctx, obj, opts))
}

// UpdateStatus replaces the status of the object of obj's namespace and
// name by obj's, through the status subresource.
func (c *Client[T]) UpdateStatus(ctx context.Context, obj T, opts metav1.UpdateOptions) (T, error) {
	if isNil(obj) {
		return obj, fmt.Errorf("typed: UpdateStatus of a nil %T", obj)
	}
	return c.recorded(ctx)(c.in(obj.GetNamespace()).UpdateStatus(ctx, obj, opts))
}

// Patch applies data, a patch of type pt, to the object of key (or to its
// subresource, such as "status").
func (c *Client[T]) Patch(ctx context.Context, key cache.ObjectName, pt types.PatchType, data []byte, opts metav1.PatchOptions, subresources ...string) (T, error) {
	return c.recorded(ctx)(c.in(key.Namespace).Patch(ctx, key.Name, pt, data, opts, subresources...))
}

// Apply applies obj by server-side apply (opts.FieldManager is required by
// the server; set opts.Force to take fields other managers own). obj is
// the apply configuration: every field its JSON encoding holds is claimed
// by the field manager, so give it only the fields the manager owns (the
// Go types' fields without omitempty are always encoded).
func (c *Client[T]) Apply(ctx context.Context, obj T, opts metav1.ApplyOptions) (T, error) {
	return c.apply(ctx, obj, opts)
}

// ApplyStatus is Apply for the status subresource.
func (c *Client[T]) ApplyStatus(ctx context.Context, obj T, opts metav1.ApplyOptions) (T, error) {
	return c.apply(ctx, obj, opts, "status")
}

func (c *Client[T]) apply(ctx context.Context, obj T, opts metav1.ApplyOptions, subresources ...string) (T, error) {
	if isNil(obj) {
		return obj, fmt.Errorf("typed: Apply of a nil %T", obj)
	}
	data, err := c.applyConfiguration(obj)
	if err != nil {
		var zero T
		return zero, err
	}
	return c.Patch(ctx, cache.MetaObjectToName(obj), types.ApplyPatchType, data, opts.ToPatchOptions(), subresources...)
}

// applyConfiguration encodes obj with its apiVersion and kind, which the
// server requires of an apply configuration.
func (c *Client[T]) applyConfiguration(obj T) ([]byte, error) {
	withKind := obj.DeepCopyObject()
	withKind.GetObjectKind().SetGroupVersionKind(c.gvk)
	if accessor, err := meta.Accessor(withKind); err == nil && !c.namespaced {
		accessor.SetNamespace("") // the server refuses a namespace on a cluster-scoped object's apply
	}
	data, err := json.Marshal(withKind)
	if err != nil {
		return nil, fmt.Errorf("typed: apply configuration of %s %s: %w", c.gvk.Kind, cache.MetaObjectToName(obj), err)
	}
	return data, nil
}

// Delete deletes the object of key. With opts.Preconditions.UID set, the
// write is recorded with that UID.
func (c *Client[T]) Delete(ctx context.Context, key cache.ObjectName, opts metav1.DeleteOptions) error {
	if err := c.in(key.Namespace).Delete(ctx, key.Name, opts); err != nil {
		return err
	}
	w := writes.Write{Resource: c.gvr, Namespace: c.namespaceOf(key.Namespace), Name: key.Name, Deleted: true}
	if opts.Preconditions != nil && opts.Preconditions.UID != nil {
		w.UID = string(*opts.Preconditions.UID)
	}
	writes.Record(ctx, w)
	return nil
}

func (c *Client[T]) namespaceOf(namespace string) string {
	if !c.namespaced {
		return ""
	}
	return namespace
}

// recorded returns a function that records a successful write's answer for
// the reconcile ctx belongs to, if any, and passes it on.
func (c *Client[T]) recorded(ctx context.Context) func(T, error) (T, error) {
	return func(obj T, err error) (T, error) {
		if err == nil {
			writes.Record(ctx, writes.Write{
				Resource: c.gvr, Namespace: obj.GetNamespace(), Name: obj.GetName(), UID: string(obj.GetUID()),
				ResourceVersion: obj.GetResourceVersion(), Labels: obj.GetLabels(),
			})
		}
		return obj, err
	}
}

// isNil reports whether obj is nil (T is a pointer type).
func isNil[T generic.Object](obj T) bool {
	return any(obj) == nil || reflect.ValueOf(obj).IsNil()
}
