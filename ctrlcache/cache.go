package ctrlcache

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/rest"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/typed"
)

// New is controller-runtime's cache.New on this library's informers: a
// cache.NewCacheFunc, so a manager takes it in one line,
//
//	mgr, err := manager.New(cfg, manager.Options{NewCache: ctrlcache.New})
//
// It reads opts as controller-runtime's cache.New does (see
// docs/controller-runtime.md for each field), with one exception: a custom
// NewInformer is refused with an error naming it, the informers being this
// library's. It is BuilderWithOptions(Options{}).
func New(config *rest.Config, opts crcache.Options) (crcache.Cache, error) {
	return BuilderWithOptions(Options{})(config, opts)
}

// BuilderWithOptions returns a cache.NewCacheFunc that makes a cache as New
// does, with this library's settings: sharding or a Lease membership, the
// compact store or other informer options per type, informers of kinds
// not served yet.
func BuilderWithOptions(options Options) crcache.NewCacheFunc {
	return func(config *rest.Config, opts crcache.Options) (crcache.Cache, error) {
		return newCache(config, opts, options)
	}
}

func newCache(config *rest.Config, opts crcache.Options, options Options) (crcache.Cache, error) {
	if config == nil {
		return nil, errors.New("ctrlcache: nil rest.Config")
	}
	if opts.NewInformer != nil && !options.isZero() {
		return nil, errNewInformerWithOptions
	}
	opts, err := defaultOpts(config, opts, options.WaitForUnservedKinds)
	if err != nil {
		return nil, err
	}
	s, err := newShared(config, opts, options)
	if err != nil {
		return nil, err
	}
	newCacheFunc := func(config crcache.Config, namespace string) crcache.Cache {
		return newInformerCache(s, config, namespace)
	}
	tree, err := compose(newCacheFunc, opts, options.WaitForUnservedKinds)
	if err != nil {
		return nil, err
	}
	return &registryCache{Cache: tree, factory: s.factory, custom: s.custom, scheme: opts.Scheme, progress: s.progress}, nil
}

// newCacheFunc makes the cache of one Config and namespace.
type newCacheFunc func(config crcache.Config, namespace string) crcache.Cache

// compose builds the caches of opts as controller-runtime's cache.New
// does: one per namespace of DefaultNamespaces (or one for all), and per
// type of ByObject. waitForUnserved is Options.WaitForUnservedKinds.
func compose(newCache newCacheFunc, opts crcache.Options, waitForUnserved bool) (crcache.Cache, error) {
	var defaultCache crcache.Cache
	if len(opts.DefaultNamespaces) > 0 {
		defaultConfig := optionDefaultsToConfig(&opts)
		defaultCache = newMultiNamespaceCache(newCache, opts.Scheme, opts.Mapper, opts.DefaultNamespaces, &defaultConfig, waitForUnserved)
	} else {
		defaultCache = newCache(optionDefaultsToConfig(&opts), corev1.NamespaceAll)
	}
	if len(opts.ByObject) == 0 {
		return defaultCache, nil
	}
	delegating := &delegatingByGVKCache{
		scheme:       opts.Scheme,
		caches:       make(map[schema.GroupVersionKind]crcache.Cache, len(opts.ByObject)),
		defaultCache: defaultCache,
	}
	for obj, config := range opts.ByObject {
		gvk, err := apiutil.GVKForObject(obj, opts.Scheme)
		if err != nil {
			return nil, fmt.Errorf("failed to get GVK for type %T: %w", obj, err)
		}
		if len(config.Namespaces) > 0 {
			delegating.caches[gvk] = newMultiNamespaceCache(newCache, opts.Scheme, opts.Mapper, config.Namespaces, nil, waitForUnserved)
		} else {
			delegating.caches[gvk] = newCache(byObjectToConfig(config), corev1.NamespaceAll)
		}
	}
	return delegating, nil
}

// newShared makes the Registry of a cache and what its informerCaches share.
func newShared(config *rest.Config, opts crcache.Options, options Options) (*shared, error) {
	informerOptions, err := withMetrics(options)
	if err != nil {
		return nil, err
	}
	config = rest.CopyConfig(config)
	if config.UserAgent == "" {
		config.UserAgent = rest.DefaultKubernetesUserAgent()
	}
	factory, err := typed.NewFactoryForClients(typed.Clients{
		Config:     config,
		HTTPClient: opts.HTTPClient,
		RESTMapper: opts.Mapper,
		NoSharing:  options.NoSharing,
	}, opts.Scheme, options.Factory...)
	if err != nil {
		return nil, fmt.Errorf("ctrlcache: %w", err)
	}
	byObject := make(map[entryKey][]generic.InformerOption, len(options.ByObject))
	for obj, informerOpts := range options.ByObject {
		gvk, err := apiutil.GVKForObject(obj, opts.Scheme)
		if err != nil {
			return nil, fmt.Errorf("ctrlcache: Options.ByObject: %w", err)
		}
		byObject[entryKey{view: viewOf(obj), gvk: gvk}] = informerOpts
	}
	var custom *customInformers
	if opts.NewInformer != nil {
		custom = &customInformers{newInformer: opts.NewInformer, config: config, httpClient: opts.HTTPClient, scheme: opts.Scheme, codecs: serializer.NewCodecFactory(opts.Scheme)}
	}
	return &shared{
		custom:                      custom,
		factory:                     factory,
		scheme:                      opts.Scheme,
		mapper:                      opts.Mapper,
		readerFailOnMissingInformer: opts.ReaderFailOnMissingInformer,
		waitForUnservedKinds:        options.WaitForUnservedKinds,
		informerOptions:             informerOptions,
		byObject:                    byObject,
		errorHandler:                watchErrorHandler(opts.DefaultWatchErrorHandler),
		noBookmarks:                 disableBookmarks,
		progress:                    newProgress(),
		resync:                      map[resyncKey]time.Duration{},
	}, nil
}

// registryCache is the cache New returns: the composed caches, whose
// informers the one Registry runs.
type registryCache struct {
	crcache.Cache
	factory  *typed.Factory
	custom   *customInformers // nil unless NewInformer
	scheme   *runtime.Scheme
	progress *progress

	mu      sync.Mutex
	started bool
}

// Start runs the Registry's informers, those made already and those made
// later, until ctx ends, and then waits for them to stop (Shutdown), as
// controller-runtime's Start blocks until its informers have stopped.
// While it runs, controller-runtime's consistency handlers are told of
// their informers' progress (progress.go). It is an error to start a
// cache twice.
func (c *registryCache) Start(ctx context.Context) error {
	c.mu.Lock()
	if c.started {
		c.mu.Unlock()
		return errors.New("informer already started") //nolint:staticcheck // controller-runtime's words
	}
	c.started = true
	c.mu.Unlock()
	c.factory.Start(ctx)
	if c.custom != nil {
		c.custom.start(ctx)
	}
	feeding, stopFeeding := context.WithCancel(ctx)
	fed := make(chan struct{})
	go func() {
		defer close(fed)
		c.progress.run(feeding)
	}()
	err := c.Cache.Start(ctx)
	stopFeeding()
	<-fed
	c.factory.Shutdown()
	return err
}

// NeedLeaderElection reports false: a cache runs on every replica, leader
// or not, as controller-runtime's does.
func (c *registryCache) NeedLeaderElection() bool { return false }

// RegistryOf returns the generic.Registry behind a cache New or
// BuilderWithOptions made (its Statuses, Membership, Shard, Reshard), and
// false for any other cache. Its lifecycle (Start, Shutdown) is the
// cache's: do not call those.
func RegistryOf(c crcache.Cache) (*generic.Registry, bool) {
	rc, ok := c.(*registryCache)
	if !ok {
		return nil, false
	}
	return rc.factory.Registry, true
}

// listOf returns an empty list of obj's kind in obj's view, for List: an
// *unstructured.UnstructuredList, a *metav1.PartialObjectMetadataList, or
// the scheme's list type of obj's kind.
func (c *registryCache) listOf(obj client.Object) (client.ObjectList, error) {
	gvk, err := apiutil.GVKForObject(obj, c.scheme)
	if err != nil {
		return nil, err
	}
	gvk.Kind += "List"
	switch obj.(type) {
	case runtime.Unstructured:
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(gvk)
		return list, nil
	case *metav1.PartialObjectMetadata:
		list := &metav1.PartialObjectMetadataList{}
		list.SetGroupVersionKind(gvk)
		return list, nil
	}
	made, err := c.scheme.New(gvk)
	if err != nil {
		return nil, err
	}
	list, ok := made.(client.ObjectList)
	if !ok {
		return nil, fmt.Errorf("the scheme's %s is a %T, not a client.ObjectList", gvk, made)
	}
	return list, nil
}
