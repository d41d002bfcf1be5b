package generictest

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/typed"
)

// Informer is a real generic.Informer[T] from one of the Fake's factories,
// started and synced. The handlers added through its AddEventHandler are
// the ones the Fake's changes wait for.
type Informer[T generic.Object] struct {
	inner    generic.Informer[T]
	fake     *Fake
	requests *informerRequests
	converts bool
}

var _ generic.Informer[*unstructured.Unstructured] = (*Informer[*unstructured.Unstructured])(nil)

// Informer returns the underlying shared informer.
func (i *Informer[T]) Informer() cache.SharedIndexInformer { return i.inner.Informer() }

// StaleObjects returns the objects the informer keeps at their last good
// state: generic.StaleObjects of the informer it wraps.
func (i *Informer[T]) StaleObjects() []generic.StaleObject { return generic.StaleObjects(i.inner) }

// Lister returns the informer's Lister.
func (i *Informer[T]) Lister() generic.Lister[T] { return i.inner.Lister() }

// AddIndexers adds typed index functions to the informer.
func (i *Informer[T]) AddIndexers(indexers cache.TypedIndexers[T]) error {
	return i.inner.AddIndexers(indexers)
}

// HasSynced reports whether the informer has synced; it has, once
// NewInformer has returned it.
func (i *Informer[T]) HasSynced() bool { return i.inner.HasSynced() }

// Run is the informer's Run; the Fake's factory runs it already.
func (i *Informer[T]) Run(ctx context.Context) { i.inner.Run(ctx) }

// GroupVersionResource returns the informer's resource.
func (i *Informer[T]) GroupVersionResource() schema.GroupVersionResource {
	return i.inner.GroupVersionResource()
}

// Status returns the informer's Status.
func (i *Informer[T]) Status() generic.Status { return i.inner.Status() }

// Ownership is the informer's Ownership.
func (i *Informer[T]) Ownership() generic.Ownership { return i.inner.Ownership() }

// WaitForResourceVersion is the informer's WaitForResourceVersion.
func (i *Informer[T]) WaitForResourceVersion(ctx context.Context, resourceVersion string) error {
	return i.inner.WaitForResourceVersion(ctx, resourceVersion)
}

// WaitForWrite is the informer's WaitForWrite.
func (i *Informer[T]) WaitForWrite(ctx context.Context, obj T) error {
	return i.inner.WaitForWrite(ctx, obj)
}

// WaitForDelete is the informer's WaitForDelete.
func (i *Informer[T]) WaitForDelete(ctx context.Context, obj T) error {
	return i.inner.WaitForDelete(ctx, obj)
}

// NewInformer returns the informer of Go type T from the Fake's factory
// (typed.InformerFor, with opts), fed by the fake client and converted at
// ingest, started, synced and watching (so that no change made after it
// returns is lost to it: the fake client sends a watch no delete made
// before the watch opened); it fails the test if T has no resource, an
// option is invalid, or the informer does not sync and watch.
func NewInformer[T generic.Object](f *Fake, opts ...generic.InformerOption) *Informer[T] {
	f.t.Helper()
	return newInformer(f, true, func(factory *typed.Factory) (generic.Informer[T], error) {
		return typed.InformerFor[T](factory, opts...)
	})
}

// NewUnstructuredInformer returns the informer of gvr whose objects are
// *unstructured.Unstructured, from the Fake's factory
// (typed.UnstructuredFor, with opts), started, synced and watching, as
// NewInformer.
func NewUnstructuredInformer(f *Fake, gvr schema.GroupVersionResource, opts ...generic.InformerOption) *Informer[*unstructured.Unstructured] {
	f.t.Helper()
	f.checkResource(gvr)
	return newInformer(f, false, func(factory *typed.Factory) (generic.Informer[*unstructured.Unstructured], error) {
		return typed.UnstructuredFor(factory, gvr, opts...)
	})
}

// NewMetadataInformer returns the metadata-only informer of gvr, whose
// objects are *metav1.PartialObjectMetadata (the object's metadata, with an
// empty TypeMeta, as client-go's metadata client returns them), from the
// Fake's factory (typed.MetadataFor, with opts), fed by an adapter of the
// fake dynamic client, started, synced and watching, as NewInformer. The
// Fake's changes wait for its handlers as for any other informer's. It
// fails the test if the Fake does not know gvr, or as NewInformer does.
func NewMetadataInformer(f *Fake, gvr schema.GroupVersionResource, opts ...generic.InformerOption) *Informer[*metav1.PartialObjectMetadata] {
	f.t.Helper()
	f.checkResource(gvr)
	return newInformer(f, false, func(factory *typed.Factory) (generic.Informer[*metav1.PartialObjectMetadata], error) {
		return typed.MetadataFor(factory, gvr, opts...)
	})
}

// newInformer makes an informer of the Fake's factory with make, learning
// of its requests, and wraps it, started, synced and watching.
func newInformer[T generic.Object](f *Fake, converts bool, newOne func(*typed.Factory) (generic.Informer[T], error)) *Informer[T] {
	f.t.Helper()
	factory := f.typedFactory()
	var informer generic.Informer[T]
	requests, err := f.makeInformer(func() (cache.SharedIndexInformer, error) {
		var err error
		if informer, err = newOne(factory); err != nil {
			return nil, err
		}
		return informer.Informer(), nil
	})
	if err != nil {
		f.t.Fatalf("generictest: %v", err)
	}
	f.checkResource(informer.GroupVersionResource())
	i := wrap(f, informer, requests, converts)
	f.sync(factory.Start, factory.WaitForCacheSync)
	return i
}

// wrap makes the kit's Informer of informer, with a handler of the Fake's
// own: it records every change of the cache, which wakes WaitFor.
func wrap[T generic.Object](f *Fake, informer generic.Informer[T], requests *informerRequests, converts bool) *Informer[T] {
	i := &Informer[T]{inner: informer, fake: f, requests: requests, converts: converts}
	if _, err := i.AddEventHandler(cache.TypedResourceEventHandlerFuncs[T]{}); err != nil {
		f.t.Fatalf("generictest: %v", err)
	}
	return i
}

// AddEventHandler registers handler on the informer, as
// generic.Informer.AddEventHandler does, and lets the Fake's changes wait
// until handler has seen them. It returns once handler has received the
// objects already cached (as adds with isInInitialList set).
func (i *Informer[T]) AddEventHandler(handler cache.TypedResourceEventHandler[T], options ...cache.HandlerOptions) (cache.ResourceEventHandlerRegistration, error) {
	f := i.fake
	f.t.Helper()
	log := f.seen.newHandler(i.Informer(), i.GroupVersionResource(), i.requests, i.converts)
	registration, err := i.inner.AddEventHandler(&trackedHandler[T]{handler: handler, seen: f.seen, log: log}, options...)
	if err != nil || !i.HasSynced() {
		return registration, err
	}
	ctx, cancel, bound := f.deadline()
	defer cancel()
	select {
	case <-registration.HasSyncedChecker().Done():
	case <-ctx.Done():
		f.t.Fatalf("generictest: the new handler of %s did not receive the cached objects within %v; it has %d of them",
			i.GroupVersionResource(), bound, f.seen.count(log))
	}
	return registration, nil
}

// trackedHandler calls a handler, then records what it has seen.
type trackedHandler[T generic.Object] struct {
	handler cache.TypedResourceEventHandler[T]
	seen    *seenLog
	log     *handlerLog
}

func (h *trackedHandler[T]) OnAdd(obj T, isInInitialList bool) {
	h.handler.OnAdd(obj, isInInitialList)
	h.seen.present(h.log, keyOf(obj), obj.GetResourceVersion())
}

func (h *trackedHandler[T]) OnUpdate(oldObj, newObj T) {
	h.handler.OnUpdate(oldObj, newObj)
	h.seen.present(h.log, keyOf(newObj), newObj.GetResourceVersion())
}

func (h *trackedHandler[T]) OnDelete(deleted cache.DeletedObject[T]) {
	h.handler.OnDelete(deleted)
	h.seen.absent(h.log, deleted.GetKey())
}

func keyOf(obj any) string {
	key, _ := cache.MetaNamespaceKeyFunc(obj)
	return key
}
