package typed

import (
	"context"
	"fmt"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/generic-informers/generic"
)

// A kind the server does not serve yet (its CRD not installed: the case
// controller-runtime #2589 asks about) still gets an informer. It is named
// by the resource guessed from the kind (meta.UnsafeGuessKindToResource,
// the plural CRDs are given by convention), and lists and watches through
// an unservedKind, which asks discovery for the kind's resource before
// each request until it knows it: until then the request is answered 404
// Not Found, so the informer is NotServed and its served guard asks again
// with backoff (1 s doubling to 30 s), or at once when the factory's watch
// of CustomResourceDefinitions sees one created or changed (crd_watch.go).
// Once discovery knows the kind, the informer lists the resource discovery
// gave, at its scope, and syncs. Every view of the kind does so
// (InformerForKind, UnstructuredForKind, MetadataForKind, and
// UnstructuredFor or MetadataFor of the resource guessed once the kind was
// handed out unserved): the views' sources are all unservedAware.

// isNotServed reports whether a RESTMapper's or discovery's error says
// that the kind is not served: an unknown kind, or an unknown group
// version.
func isNotServed(err error) bool {
	return meta.IsNoMatchError(err) || apierrors.IsNotFound(err)
}

// unservedKinds records the kinds handed out before the server served
// them, by the resource their informer is named by, so that every
// InformerFor of such a kind shares that informer, whatever discovery
// says later.
type unservedKinds struct {
	mu    sync.Mutex
	byGVK map[schema.GroupVersionKind]schema.GroupVersionResource
}

// resourceOf returns the resource an informer of gvk was named by when it
// was handed out unserved, if it was.
func (u *unservedKinds) resourceOf(gvk schema.GroupVersionKind) (schema.GroupVersionResource, bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	gvr, ok := u.byGVK[gvk]
	return gvr, ok
}

// guess records gvk as unserved and returns the resource its informer is
// named by.
func (u *unservedKinds) guess(gvk schema.GroupVersionKind) schema.GroupVersionResource {
	u.mu.Lock()
	defer u.mu.Unlock()
	if gvr, ok := u.byGVK[gvk]; ok {
		return gvr
	}
	if u.byGVK == nil {
		u.byGVK = map[schema.GroupVersionKind]schema.GroupVersionResource{}
	}
	gvr, _ := meta.UnsafeGuessKindToResource(gvk)
	u.byGVK[gvk] = gvr
	return gvr
}

// kindOf returns the kind recorded for gvr, if an informer of an unserved
// kind is named by it.
func (u *unservedKinds) kindOf(gvr schema.GroupVersionResource) (schema.GroupVersionKind, bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	for gvk, named := range u.byGVK {
		if named == gvr {
			return gvk, true
		}
	}
	return schema.GroupVersionKind{}, false
}

// resourceFor returns the resource of gvk: the one an informer of it was
// named by, if it was handed out unserved; else the RESTMapper's or
// discovery's; else, if the server does not serve the kind, the one
// guessed from it, recorded for the next calls.
func (f *Factory) resourceFor(gvk schema.GroupVersionKind) (schema.GroupVersionResource, error) {
	if gvr, ok := f.unserved.resourceOf(gvk); ok {
		return gvr, nil
	}
	mapping, err := f.mappingFor(gvk)
	switch {
	case err == nil:
		return mapping.Resource, nil
	case isNotServed(err):
		return f.unserved.guess(gvk), nil
	}
	return schema.GroupVersionResource{}, err
}

// unservedAware makes source list and watch an unserved kind's informer
// through an unservedKind; the informers of other resources are source's
// own.
func (f *Factory) unservedAware(source generic.Source) generic.Source {
	return func(gvr schema.GroupVersionResource, namespace string, tweak generic.TweakListOptionsFunc) cache.ListerWatcher {
		gvk, ok := f.unserved.kindOf(gvr)
		if !ok {
			return source(gvr, namespace, tweak)
		}
		u := &unservedKind{gvk: gvk, named: gvr, factory: f, source: source, namespace: namespace, tweak: tweak}
		// The resource's ListerWatcher, made but not used, answers the
		// reflector's WatchList question as the one made once discovery
		// knows the kind will (the same client).
		return cache.ToListWatcherWithWatchListSemantics(&cache.ListWatch{ListWithContextFunc: u.list, WatchFuncWithContext: u.watch},
			source(gvr, namespace, tweak))
	}
}

// unservedKind is the ListerWatcher of an informer handed out before the
// server served its kind: it asks discovery for the kind's resource before
// each request until it knows it, and then lists and watches it.
type unservedKind struct {
	gvk       schema.GroupVersionKind
	named     schema.GroupVersionResource
	factory   *Factory
	source    generic.Source
	namespace string
	tweak     generic.TweakListOptionsFunc

	mu sync.Mutex
	lw cache.ListerWatcherWithContext
}

func (u *unservedKind) list(ctx context.Context, options metav1.ListOptions) (runtime.Object, error) {
	lw, err := u.resolved()
	if err != nil {
		return nil, err
	}
	return lw.ListWithContext(ctx, options)
}

func (u *unservedKind) watch(ctx context.Context, options metav1.ListOptions) (watch.Interface, error) {
	lw, err := u.resolved()
	if err != nil {
		return nil, err
	}
	return lw.WatchWithContext(ctx, options)
}

// resolved returns the ListerWatcher of the kind's resource, once
// discovery knows it; until then, a 404 Not Found naming the kind.
func (u *unservedKind) resolved() (cache.ListerWatcherWithContext, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.lw != nil {
		return u.lw, nil
	}
	mapping, err := u.factory.mappingFor(u.gvk)
	if isNotServed(err) {
		return nil, apierrors.NewNotFound(u.named.GroupResource(), fmt.Sprintf("(kind %v is not served yet: %v)", u.gvk, err))
	}
	if err != nil {
		return nil, err
	}
	namespace := u.namespace
	if mapping.Scope.Name() == meta.RESTScopeNameRoot {
		namespace = metav1.NamespaceAll
	}
	u.lw = cache.ToListerWatcherWithContext(u.source(mapping.Resource, namespace, u.tweak))
	return u.lw, nil
}
