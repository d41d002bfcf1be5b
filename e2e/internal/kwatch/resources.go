package kwatch

import (
	"context"
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/cache"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/e2e/internal/cluster"
	"github.com/generic-informers/generic/typed"
	"github.com/generic-informers/generic/unstructured"
)

// resource is one resource kwatch watches, whatever the Go type its
// informer holds.
type resource struct {
	// name is how kwatch prints it: the plural, then the group if any.
	name     string
	gvr      schema.GroupVersionResource
	typed    bool
	informer cache.SharedIndexInformer
	status   func() generic.Status
}

// factories are the two instantiations kwatch uses: the typed factory for
// kinds in client-go's scheme, the unstructured one for everything else.
type factories struct {
	typed        *typed.Factory
	unstructured *unstructured.Factory
	scheme       *runtime.Scheme
}

// newFactories makes the factories; every change of an informer's state
// after its first sync goes to events (the first sync has its own line).
func newFactories(c *cluster.Cluster, namespace, selector string, events chan<- Event) (*factories, error) {
	opts := []generic.Option{
		generic.WithNamespace(namespace),
		generic.WithTweakListOptions(func(options *metav1.ListOptions) { options.LabelSelector = selector }),
		generic.WithStateHandler(stateChanges(events)),
	}
	typedFactory, err := typed.NewFactoryForClients(typed.Clients{Config: c.Config, RESTMapper: c.Mapper}, scheme.Scheme, opts...)
	if err != nil {
		return nil, err
	}
	return &factories{
		typed:        typedFactory,
		unstructured: unstructured.NewFactory(c.Dynamic, opts...),
		scheme:       scheme.Scheme,
	}, nil
}

// watch resolves arg ("configmaps", "widgets.example.com") and registers a
// handler sending its events.
func (f *factories) watch(mapper meta.RESTMapper, arg string, events chan<- Event) (*resource, error) {
	gvr, err := mapper.ResourceFor(schema.ParseGroupResource(arg).WithVersion(""))
	if err != nil {
		return nil, fmt.Errorf("resource %q: %w", arg, err)
	}
	gvk, err := mapper.KindFor(gvr)
	if err != nil {
		return nil, fmt.Errorf("resource %q: %w", arg, err)
	}
	r := &resource{name: gvr.GroupResource().String(), gvr: gvr, typed: f.scheme.Recognizes(gvk)}
	if r.typed {
		informer, err := typed.InformerForKind(f.typed, gvk)
		if err != nil {
			return nil, err
		}
		r.informer, r.status = informer.Informer(), informer.Status
		return r, sendEvents(informer, r.name, events)
	}
	informer := f.unstructured.ForResource(gvr)
	r.informer, r.status = informer.Informer(), informer.Status
	return r, sendEvents(informer, r.name, events)
}

func (f *factories) start(ctx context.Context) {
	f.typed.Start(ctx)
	f.unstructured.Start(ctx)
}

func (f *factories) shutdown() {
	f.typed.Shutdown()
	f.unstructured.Shutdown()
}

// stateChanges returns a StateHandler that sends every change of state to
// events, but for each resource's first Synced: that one is the end of the
// initial sync, which waitForSync reports.
func stateChanges(events chan<- Event) generic.StateHandler {
	var mu sync.Mutex
	synced := map[schema.GroupVersionResource]bool{}
	return func(status generic.Status) {
		mu.Lock()
		first := status.State == generic.Synced && !synced[status.GVR]
		if status.State == generic.Synced {
			synced[status.GVR] = true
		}
		mu.Unlock()
		if !first {
			events <- stateEvent(status)
		}
	}
}
