package kwatch

import (
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/typed"
)

// resource is one resource kwatch watches, whatever the Go type its
// informer holds.
type resource struct {
	// name is how kwatch prints it: the plural, then the group if any.
	name     string
	gvr      schema.GroupVersionResource
	informer cache.SharedIndexInformer
}

// watcher holds the one factory kwatch watches every resource through:
// kinds in client-go's scheme as typed objects (typed.InformerForKind),
// everything else, custom resources, as *unstructured.Unstructured
// (typed.UnstructuredFor). One Start, one WaitForCacheSyncError, one
// Statuses and one Shutdown serve them all.
type watcher struct {
	factory *typed.Factory
	scheme  *runtime.Scheme
}

// newWatcher makes the factory; every change of an informer's state but
// those of a plain initial sync goes to events (stateChanges).
func newWatcher(config *rest.Config, namespace, selector string, events chan<- Event, extra ...generic.FactoryOption) (*watcher, error) {
	opts := append([]generic.FactoryOption{
		generic.WithNamespace(namespace),
		generic.WithLabelSelector(selector),
		generic.WithStateHandler(stateChanges(events)),
	}, extra...)
	factory, err := typed.NewFactory(config, scheme.Scheme, opts...)
	if err != nil {
		return nil, err
	}
	return &watcher{factory: factory, scheme: scheme.Scheme}, nil
}

// watch resolves arg ("configmaps", "widgets.example.com") with mapper and
// registers a handler sending its events. The factory is told the resource
// and its scope, so that it needs no discovery of its own.
func (w *watcher) watch(mapper meta.RESTMapper, arg string, events chan<- Event) (*resource, error) {
	gvr, err := mapper.ResourceFor(schema.ParseGroupResource(arg).WithVersion(""))
	if err != nil {
		return nil, fmt.Errorf("resource %q: %w", arg, err)
	}
	gvk, err := mapper.KindFor(gvr)
	if err != nil {
		return nil, fmt.Errorf("resource %q: %w", arg, err)
	}
	r := &resource{name: gvr.GroupResource().String(), gvr: gvr}
	if w.scheme.Recognizes(gvk) {
		informer, err := typed.InformerForKind(w.factory, gvk)
		if err != nil {
			return nil, err
		}
		r.informer = informer.Informer()
		return r, sendEvents(informer, r.name, events)
	}
	informer, err := typed.UnstructuredFor(w.factory, gvr)
	if err != nil {
		return nil, err
	}
	r.informer = informer.Informer()
	return r, sendEvents(informer, r.name, events)
}

// stateChanges returns a StateHandler that sends changes of state to
// events, but for those of a plain initial sync (NotStarted to Syncing to
// Synced), which the initial sync's own lines report. Once a resource has
// had another state first (Forbidden, NotServed), its every change is sent,
// its first Synced included.
func stateChanges(events chan<- Event) generic.StateHandler {
	var mu sync.Mutex
	type seen struct{ changed, synced, sent bool }
	byGVR := map[schema.GroupVersionResource]*seen{}
	return func(status generic.Status) {
		mu.Lock()
		s := byGVR[status.GVR]
		if s == nil {
			s = &seen{}
			byGVR[status.GVR] = s
		}
		quiet := !s.sent && ((status.State == generic.Syncing && !s.changed) || (status.State == generic.Synced && !s.synced))
		s.changed = true
		s.synced = s.synced || status.State == generic.Synced
		s.sent = s.sent || !quiet
		mu.Unlock()
		if !quiet {
			events <- stateEvent(status)
		}
	}
}
