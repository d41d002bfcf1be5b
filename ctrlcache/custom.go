package ctrlcache

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/generic-informers/generic"
)

// A cache.Options.NewInformer is honoured as controller-runtime honours it,
// for tests above all (controllertest.FakeInformer): each informer of the
// cache is the SharedIndexInformer it returns, fed by a ListerWatcher of
// the kind's resource, and the cache reads that informer's indexer. Such
// informers are the caller's, not the Registry's: none of this library's
// memory savings, compact store, sharding or kinds-served-later apply, so
// NewInformer together with any ctrlcache.Options is refused.

// customInformers makes and runs the informers of NewInformer.
type customInformers struct {
	newInformer func(toolscache.ListerWatcher, runtime.Object, time.Duration, toolscache.Indexers) toolscache.SharedIndexInformer
	config      *rest.Config
	httpClient  *http.Client
	scheme      *runtime.Scheme
	codecs      serializer.CodecFactory

	mu      sync.Mutex
	ctx     context.Context // the Start context; nil until Start
	pending []*customView   // made before Start
}

// errNewInformerWithOptions refuses NewInformer beside this library's
// options, which its informers cannot honour.
var errNewInformerWithOptions = errors.New("ctrlcache: cache.Options.NewInformer makes the informers the caller's own, which cannot honour ctrlcache.Options (Factory, Informer, ByObject, WaitForUnservedKinds, NoSharing, Metrics): set one or the other")

// start runs every informer made so far and those made later under ctx.
func (c *customInformers) start(ctx context.Context) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ctx = ctx
	for _, v := range c.pending {
		v.run(ctx)
	}
	c.pending = nil
}

// newView makes the informer of key at gvr, with config's selection in
// namespace, and runs it if the cache is started.
func (c *customInformers) newView(key entryKey, gvr schema.GroupVersionResource, config crcache.Config, namespace string, resync time.Duration, example runtime.Object) (view, error) {
	lw, err := c.listWatcher(key, gvr, namespace, config)
	if err != nil {
		return nil, err
	}
	informer := c.newInformer(lw, example, resync, toolscache.Indexers{toolscache.NamespaceIndex: toolscache.MetaNamespaceIndexFunc})
	if config.Transform != nil {
		if err := informer.SetTransform(config.Transform); err != nil {
			return nil, err
		}
	}
	v := &customView{informer: informer, resource: gvr.GroupResource(), stop: make(chan struct{}), done: make(chan struct{})}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ctx == nil {
		c.pending = append(c.pending, v)
		return v, nil
	}
	v.run(c.ctx)
	return v, nil
}

// listWatcher lists and watches gvr in namespace with config's selectors,
// through the client of key's view.
func (c *customInformers) listWatcher(key entryKey, gvr schema.GroupVersionResource, namespace string, config crcache.Config) (toolscache.ListerWatcher, error) {
	var source generic.Source
	switch key.view {
	case unstructuredView:
		client, err := dynamic.NewForConfigAndClient(c.config, c.httpClient)
		if err != nil {
			return nil, err
		}
		source = generic.DynamicSource(client)
	case metadataView:
		client, err := metadata.NewForConfigAndClient(c.config, c.httpClient)
		if err != nil {
			return nil, err
		}
		source = generic.MetadataSource(client)
	default:
		client, err := apiutil.RESTClientForGVK(key.gvk, false, false, c.config, c.codecs, c.httpClient)
		if err != nil {
			return nil, err
		}
		return toolscache.NewFilteredListWatchFromClient(client, gvr.Resource, namespace, selectorTweak(config)), nil
	}
	return source(gvr, namespace, selectorTweak(config)), nil
}

// selectorTweak sets config's selectors on each list and watch.
func selectorTweak(config crcache.Config) func(*metav1.ListOptions) {
	return func(o *metav1.ListOptions) {
		if config.LabelSelector != nil {
			o.LabelSelector = config.LabelSelector.String()
		}
		if config.FieldSelector != nil {
			o.FieldSelector = config.FieldSelector.String()
		}
	}
}

// customView is the view of an informer NewInformer made.
type customView struct {
	informer toolscache.SharedIndexInformer
	resource schema.GroupResource

	once sync.Once
	stop chan struct{}
	done chan struct{}
}

// run runs the informer until ctx ends or it is released.
func (v *customView) run(ctx context.Context) {
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		defer close(v.done)
		defer cancel()
		go func() {
			select {
			case <-v.stop:
				cancel()
			case <-ctx.Done():
			}
		}()
		v.informer.RunWithContext(ctx)
	}()
}

func (v *customView) handle() handleMethods { return customHandle{v} }

func (v *customView) lister() generic.Lister[runtime.Object] {
	return generic.NewLister[runtime.Object](v.informer.GetIndexer(), v.resource)
}

func (v *customView) get(namespace, name string) (runtime.Object, bool, error) {
	return getFrom(v.lister(), namespace, name)
}

func (v *customView) list(namespace string, selector labels.Selector) ([]runtime.Object, error) {
	return listFrom(v.lister(), namespace, selector)
}

func (v *customView) byIndex(indexName, value string) ([]runtime.Object, error) {
	return v.lister().ByIndex(indexName, value)
}

func (v *customView) addIndexers(indexers toolscache.Indexers) error {
	return v.informer.AddIndexers(indexers)
}

func (v *customView) addEventHandler(handler toolscache.ResourceEventHandler, options toolscache.HandlerOptions) (toolscache.ResourceEventHandlerRegistration, error) {
	return v.informer.AddEventHandlerWithOptions(handler, options)
}

// customHandle gives a customView the Handle methods the cache uses.
type customHandle struct{ v *customView }

func (h customHandle) Informer() toolscache.SharedIndexInformer { return h.v.informer }

func (h customHandle) HasSynced() bool { return h.v.informer.HasSynced() }

// Ownership is every object's: NewInformer is refused beside a membership.
func (h customHandle) Ownership() generic.Ownership { return generic.Ownership{} }

func (h customHandle) Status() generic.Status {
	if h.v.informer.IsStopped() {
		return generic.Status{State: generic.Stopped}
	}
	return generic.Status{State: generic.NotStarted}
}

func (h customHandle) Release() bool {
	released := false
	h.v.once.Do(func() {
		close(h.v.stop)
		released = true
	})
	return released
}

func (h customHandle) Done() <-chan struct{} { return h.v.done }
