package ctrlcache

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// informerCache is controller-runtime's informerCache on the Registry: the
// cache of one Config (selectors, transform, deep copy, sync period) and
// namespace, as controller-runtime makes one per namespace of
// DefaultNamespaces and per type of ByObject and composes them
// (multiNamespaceCache, delegatingByGVKCache). Its informers are Handles of
// the one Registry every informerCache of a cache shares; the Registry runs
// them (registryCache.Start), and informerCache.Start only marks the cache
// readable, as controller-runtime's does.
type informerCache struct {
	shared    *shared
	config    crcache.Config
	namespace string

	mu      sync.Mutex
	entries map[entryKey]*entry
	// transforms holds the transform each informer of the cache is
	// acquired with, made once per kind and view so that an informer
	// acquired again (after RemoveInformer) is asked for with the same
	// function value.
	transforms map[entryKey]toolscache.TransformFunc
	started    bool
	startWait  chan struct{}
}

// entryKey names an informer of the cache, as controller-runtime's tracker
// does: one per view and kind.
type entryKey struct {
	view viewKind
	gvk  schema.GroupVersionKind
}

var _ crcache.Cache = (*informerCache)(nil)

func newInformerCache(s *shared, config crcache.Config, namespace string) *informerCache {
	return &informerCache{
		shared:     s,
		config:     config,
		namespace:  namespace,
		entries:    map[entryKey]*entry{},
		transforms: map[entryKey]toolscache.TransformFunc{},
		startWait:  make(chan struct{}),
	}
}

// Start marks the cache started, so that reads no longer fail with
// ErrCacheNotStarted, and blocks until ctx ends. It is an error to start a
// cache twice.
func (ic *informerCache) Start(ctx context.Context) error {
	ic.mu.Lock()
	if ic.started {
		ic.mu.Unlock()
		return errors.New("informer already started") //nolint:staticcheck // controller-runtime's words
	}
	ic.started = true
	close(ic.startWait)
	ic.mu.Unlock()
	<-ctx.Done()
	return nil
}

// WaitForCacheSync waits for the cache to be started, then for every
// informer it has to sync; false if ctx ends first.
func (ic *informerCache) WaitForCacheSync(ctx context.Context) bool {
	select {
	case <-ic.startWait:
	case <-ctx.Done():
		return false
	}
	ic.mu.Lock()
	synced := make([]toolscache.InformerSynced, 0, len(ic.entries))
	for _, e := range ic.entries {
		synced = append(synced, e.view.handle().HasSynced)
	}
	ic.mu.Unlock()
	return toolscache.WaitForCacheSync(ctx.Done(), synced...)
}

// Get reads key into out from the informer of out's kind and view, made
// on first use (unless ReaderFailOnMissingInformer).
func (ic *informerCache) Get(ctx context.Context, key client.ObjectKey, out client.Object, opts ...client.GetOption) error {
	gvk, err := apiutil.GVKForObject(out, ic.shared.scheme)
	if err != nil {
		return err
	}
	started, e, err := ic.entryFor(ctx, gvk, out, ic.shared.readerFailOnMissingInformer, nil)
	if err != nil {
		return err
	}
	if !started {
		return &crcache.ErrCacheNotStarted{}
	}
	return e.get(key, out, opts...)
}

// List reads into out, a list, from the informer of its items' kind and
// view.
func (ic *informerCache) List(ctx context.Context, out client.ObjectList, opts ...client.ListOption) error {
	gvk, item, err := listItem(ic.shared.scheme, out)
	if err != nil {
		return err
	}
	started, e, err := ic.entryFor(ctx, gvk, item, ic.shared.readerFailOnMissingInformer, nil)
	if err != nil {
		return err
	}
	if !started {
		return &crcache.ErrCacheNotStarted{}
	}
	return e.list(out, opts...)
}

// listItem returns the kind of list's items and an empty item, in list's
// view, as controller-runtime's objectTypeForListObject.
func listItem(scheme *runtime.Scheme, list client.ObjectList) (schema.GroupVersionKind, client.Object, error) {
	gvk, err := apiutil.GVKForObject(list, scheme)
	if err != nil {
		return schema.GroupVersionKind{}, nil, err
	}
	gvk.Kind = strings.TrimSuffix(gvk.Kind, "List")
	switch list.(type) {
	case runtime.Unstructured:
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		return gvk, u, nil
	case *metav1.PartialObjectMetadataList:
		pom := &metav1.PartialObjectMetadata{}
		pom.SetGroupVersionKind(gvk)
		return gvk, pom, nil
	}
	obj, err := scheme.New(gvk)
	if err != nil {
		return schema.GroupVersionKind{}, nil, err
	}
	item, ok := obj.(client.Object)
	if !ok {
		return schema.GroupVersionKind{}, nil, fmt.Errorf("%T is not a client.Object", obj)
	}
	return gvk, item, nil
}

// GetInformer returns the informer of obj's kind and view, made on first
// use; by default it blocks until the informer synced if the cache is
// started (BlockUntilSynced).
func (ic *informerCache) GetInformer(ctx context.Context, obj client.Object, opts ...crcache.InformerGetOption) (crcache.Informer, error) {
	gvk, err := apiutil.GVKForObject(obj, ic.shared.scheme)
	if err != nil {
		return nil, err
	}
	_, e, err := ic.entryFor(ctx, gvk, obj, false, opts)
	if err != nil {
		return nil, err
	}
	return informer{v: e.view, progress: ic.shared.progress}, nil
}

// GetInformerForKind is GetInformer for the typed object of gvk.
func (ic *informerCache) GetInformerForKind(ctx context.Context, gvk schema.GroupVersionKind, opts ...crcache.InformerGetOption) (crcache.Informer, error) {
	obj, err := ic.shared.scheme.New(gvk)
	if err != nil {
		return nil, err
	}
	_, e, err := ic.entryFor(ctx, gvk, obj, false, opts)
	if err != nil {
		return nil, err
	}
	return informer{v: e.view, progress: ic.shared.progress}, nil
}

// RemoveInformer releases the cache's hold on the informer of obj's kind
// and view: the informer stops unless another cache of the Registry holds
// it (the same kind, view and selection). A later read makes a fresh one.
func (ic *informerCache) RemoveInformer(_ context.Context, obj client.Object) error {
	gvk, err := apiutil.GVKForObject(obj, ic.shared.scheme)
	if err != nil {
		return err
	}
	key := entryKey{view: viewOf(obj), gvk: gvk}
	ic.mu.Lock()
	e, ok := ic.entries[key]
	delete(ic.entries, key)
	ic.mu.Unlock()
	if ok {
		e.view.handle().Release()
	}
	return nil
}

// IndexField adds the index controller-runtime's client.MatchingFields
// lists use, as controller-runtime's cache names and fills it.
func (ic *informerCache) IndexField(ctx context.Context, obj client.Object, field string, extractValue client.IndexerFunc) error {
	i, err := ic.GetInformer(ctx, obj, crcache.BlockUntilSynced(false))
	if err != nil {
		return err
	}
	return i.AddIndexers(toolscache.Indexers{fieldIndexName(field): fieldIndexFunc(extractValue)})
}

// entryFor returns the cache's informer of gvk in obj's view, made (and,
// the cache started, run) on first use unless failOnMissing, and whether
// the cache is started. Started, it waits for the informer to sync unless
// opts say BlockUntilSynced(false); ctx ending first is a Timeout error,
// as controller-runtime's.
func (ic *informerCache) entryFor(ctx context.Context, gvk schema.GroupVersionKind, obj runtime.Object, failOnMissing bool, opts []crcache.InformerGetOption) (bool, *entry, error) {
	e, started, err := ic.lookup(gvk, obj, failOnMissing)
	if err != nil {
		return started, nil, err
	}
	getOpts := crcache.InformerGetOptions{}
	for _, opt := range opts {
		opt(&getOpts)
	}
	block := getOpts.BlockUntilSynced == nil || *getOpts.BlockUntilSynced
	if block && started && !e.view.handle().HasSynced() {
		if !toolscache.WaitForCacheSync(ctx.Done(), e.view.handle().HasSynced) {
			return started, nil, apierrors.NewTimeoutError(fmt.Sprintf("failed waiting for %T Informer to sync", obj), 0)
		}
	}
	return started, e, nil
}

func (ic *informerCache) lookup(gvk schema.GroupVersionKind, obj runtime.Object, failOnMissing bool) (*entry, bool, error) {
	key := entryKey{view: viewOf(obj), gvk: gvk}
	ic.mu.Lock()
	defer ic.mu.Unlock()
	if e, ok := ic.entries[key]; ok {
		return e, ic.started, nil
	}
	if failOnMissing {
		return nil, ic.started, &crcache.ErrResourceNotCached{GVK: gvk}
	}
	e, err := ic.shared.newEntry(key, obj, ic)
	if err != nil {
		return nil, ic.started, err
	}
	ic.entries[key] = e
	return e, ic.started, nil
}

// scopeOf returns the scope of gvk, or namespaced if the server does not
// serve it (yet: WaitForUnservedKinds).
func scopeOf(mapper meta.RESTMapper, gvk schema.GroupVersionKind) (meta.RESTScopeName, error) {
	mapping, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return "", err
	}
	return mapping.Scope.Name(), nil
}

// transformOf returns the transform of key's informer: the Config's, and
// for metadata-only objects one that first sets their kind, which the
// metadata API leaves empty and controller-runtime's cache sets (its
// gvkFixupWatcher). Called with ic.mu held.
func (ic *informerCache) transformOf(key entryKey) toolscache.TransformFunc {
	if key.view != metadataView {
		return ic.config.Transform
	}
	if transform, ok := ic.transforms[key]; ok {
		return transform
	}
	gvk, then := key.gvk, ic.config.Transform
	transform := func(obj any) (any, error) {
		if m, ok := obj.(*metav1.PartialObjectMetadata); ok {
			m.SetGroupVersionKind(gvk)
		}
		if then == nil {
			return obj, nil
		}
		return then(obj)
	}
	ic.transforms[key] = transform
	return transform
}
