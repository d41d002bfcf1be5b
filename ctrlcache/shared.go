package ctrlcache

import (
	"context"
	"math/rand/v2"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/typed"
)

// defaultSyncPeriod is controller-runtime's default SyncPeriod.
const defaultSyncPeriod = 10 * time.Hour

// shared is what every informerCache of one cache shares: the Registry
// (a typed.Factory) and the settings that are not per Config.
type shared struct {
	factory                     *typed.Factory
	scheme                      *runtime.Scheme
	mapper                      meta.RESTMapper
	readerFailOnMissingInformer bool
	waitForUnservedKinds        bool
	informerOptions             []generic.InformerOption
	byObject                    map[entryKey][]generic.InformerOption
	// errorHandler is the one generic.ErrorHandler made of
	// DefaultWatchErrorHandler (nil if unset): one function value, so
	// that the informers it is given to can be shared (Acquire compares
	// options by identity).
	errorHandler generic.ErrorHandler
	noBookmarks  generic.TweakListOptionsFunc
	// custom makes the informers when cache.Options.NewInformer is set;
	// nil otherwise.
	custom *customInformers
	// progress feeds controller-runtime's consistency handlers the
	// resourceVersion their informers' stores have applied, while the
	// cache runs (progress.go).
	progress *progress

	mu sync.Mutex
	// resync holds the jittered resync period given to each informer
	// selection, made once: controller-runtime jitters each informer's
	// SyncPeriod by ±10%, and a shared informer must be asked for with one
	// period each time.
	resync map[resyncKey]time.Duration
}

type resyncKey struct {
	gvk    schema.GroupVersionKind
	period time.Duration
}

// newEntry makes the informer of key for ic's Config and namespace:
// acquires it from the Registry, or with NewInformer makes it.
func (s *shared) newEntry(key entryKey, example runtime.Object, ic *informerCache) (*entry, error) {
	gvr, unserved, err := s.resourceOf(key.gvk)
	if err != nil {
		return nil, err
	}
	var v view
	if s.custom != nil {
		v, err = s.custom.newView(key, gvr, ic.config, s.namespaceOf(key.gvk, ic.config, ic.namespace), s.resyncFor(key.gvk, syncPeriod(ic.config)), example)
	} else {
		v, err = acquireView(s.factory, key.view, key.gvk, s.optionsFor(key, ic))
	}
	if err != nil {
		return nil, err
	}
	disable := ic.config.UnsafeDisableDeepCopy != nil && *ic.config.UnsafeDisableDeepCopy
	return &entry{view: v, gvk: key.gvk, resource: gvr.GroupResource(), guessed: unserved, mapper: s.mapper, disableDeepCopy: disable}, nil
}

// resourceOf returns gvk's resource from the RESTMapper; a kind it does not
// know is controller-runtime's no-match error, unless
// WaitForUnservedKinds: then it is the resource guessed from the kind, and
// unserved is true (the informer waits until the kind is served; see
// acquireView).
func (s *shared) resourceOf(gvk schema.GroupVersionKind) (gvr schema.GroupVersionResource, unserved bool, err error) {
	mapping, err := s.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err == nil {
		return mapping.Resource, false, nil
	}
	if s.waitForUnservedKinds && meta.IsNoMatchError(err) {
		gvr, _ := meta.UnsafeGuessKindToResource(gvk)
		return gvr, true, nil
	}
	return schema.GroupVersionResource{}, false, err
}

// optionsFor returns the informer options of key under ic's Config and
// namespace: the library's own (Options.Informer, then Options.ByObject),
// then those controller-runtime's cache.Options ask for, which win.
func (s *shared) optionsFor(key entryKey, ic *informerCache) []generic.InformerOption {
	config := ic.config
	opts := append([]generic.InformerOption{}, s.informerOptions...)
	opts = append(opts, s.byObject[key]...)
	if ns := s.namespaceOf(key.gvk, config, ic.namespace); ns != "" {
		opts = append(opts, generic.WithNamespace(ns))
	}
	if config.LabelSelector != nil && !config.LabelSelector.Empty() {
		opts = append(opts, generic.WithLabelSelector(config.LabelSelector.String()))
	}
	if config.FieldSelector != nil && !config.FieldSelector.Empty() {
		opts = append(opts, generic.WithFieldSelector(config.FieldSelector.String()))
	}
	if transform := ic.transformOf(key); transform != nil {
		opts = append(opts, generic.WithTransform(transform))
	}
	opts = append(opts, generic.WithResyncPeriod(s.resyncFor(key.gvk, syncPeriod(config))))
	if s.errorHandler != nil {
		opts = append(opts, generic.WithErrorHandler(s.errorHandler))
	}
	if config.EnableWatchBookmarks != nil && !*config.EnableWatchBookmarks {
		opts = append(opts, generic.WithTweakListOptions(s.noBookmarks))
	}
	return opts
}

// namespaceOf returns the namespace the informer of gvk lists under config
// in the cache of namespace: none for a cluster-scoped kind. A kind not
// served yet (WaitForUnservedKinds) is given the namespace; its informer
// ignores it if the kind turns out cluster-scoped (typed.InformerForKind).
func (s *shared) namespaceOf(gvk schema.GroupVersionKind, config crcache.Config, namespace string) string {
	if scope, err := scopeOf(s.mapper, gvk); err == nil && scope == meta.RESTScopeNameRoot {
		return ""
	}
	return restrictNamespaceBySelector(namespace, config.FieldSelector)
}

// syncPeriod is config's SyncPeriod, controller-runtime's default if unset.
func syncPeriod(config crcache.Config) time.Duration {
	if config.SyncPeriod != nil {
		return *config.SyncPeriod
	}
	return defaultSyncPeriod
}

// resyncFor returns period jittered into [0.9, 1.1) of it, as
// controller-runtime's calculateResyncPeriod, the same for every informer
// of gvk asked for with period.
func (s *shared) resyncFor(gvk schema.GroupVersionKind, period time.Duration) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := resyncKey{gvk: gvk, period: period}
	if jittered, ok := s.resync[key]; ok {
		return jittered
	}
	jittered := time.Duration(float64(period) * (rand.Float64()/5.0 + 0.9)) //nolint:gosec // jitter, not a secret
	s.resync[key] = jittered
	return jittered
}

// restrictNamespaceBySelector returns namespace, or if it is empty the
// namespace an exact metadata.namespace field selector names, as
// controller-runtime's.
func restrictNamespaceBySelector(namespace string, selector fields.Selector) string {
	if namespace != "" || selector == nil || selector.Empty() {
		return namespace
	}
	value, _ := selector.RequiresExactMatch("metadata.namespace")
	return value
}

// watchErrorHandler adapts controller-runtime's DefaultWatchErrorHandler
// to the generic.ErrorHandler every informer reports its list and watch
// errors to. This library's informers run their reflector inside, so the
// handler gets an empty Reflector, never nil: client-go's
// DefaultWatchErrorHandler reads its fields.
func watchErrorHandler(h toolscache.WatchErrorHandlerWithContext) generic.ErrorHandler {
	if h == nil {
		return nil
	}
	reflector := &toolscache.Reflector{}
	return func(ctx context.Context, err error) { h(ctx, reflector, err) }
}

// disableBookmarks makes watches ask for no bookmarks
// (EnableWatchBookmarks false), except WatchList streams, which the server
// answers only with bookmarks on.
func disableBookmarks(o *metav1.ListOptions) {
	if o.Watch && o.SendInitialEvents == nil {
		o.AllowWatchBookmarks = false
	}
}
