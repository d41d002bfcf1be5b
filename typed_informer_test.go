package generic_test

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	corev1informers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/generic-informers/generic"
)

// upstreamUser is code written against client-go's typed informer, as
// informer-gen v0.38's TypedInformer() hands it out: it knows nothing of
// this library. It indexes ConfigMaps by their color and records what its
// handler is told.
type upstreamUser struct {
	mu     sync.Mutex
	events []string
}

func (u *upstreamUser) record(event string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.events = append(u.events, event)
}

func (u *upstreamUser) recorded() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return slices.Clone(u.events)
}

func (u *upstreamUser) setUp(informer corev1informers.ConfigMapIndexInformer) error {
	if err := informer.AddTypedIndexers(corev1informers.ConfigMapIndexers{"color": func(cm *corev1.ConfigMap) ([]string, error) {
		return []string{cm.Data["color"]}, nil
	}}); err != nil {
		return err
	}
	_, err := informer.AddTypedEventHandler(corev1informers.ConfigMapHandlerFuncs{
		AddFunc:    func(cm *corev1.ConfigMap) { u.record("add " + cm.Name) },
		UpdateFunc: func(_, cm *corev1.ConfigMap) { u.record("update " + cm.Name) },
		DeleteFunc: func(d corev1informers.DeletedConfigMap) { u.record("delete " + d.GetName()) },
	})
	return err
}

// blue returns the keys of the blue ConfigMaps, read both ways a typed
// indexer reads, and the Go types its store holds as it shows them.
func (u *upstreamUser) blue(informer corev1informers.ConfigMapIndexInformer, like *corev1.ConfigMap) (byValue, byObject, stored []string, err error) {
	indexer := informer.GetTypedIndexer()
	cms, err := indexer.ByTypedIndex("color", "blue")
	if err != nil {
		return nil, nil, nil, err
	}
	for _, cm := range cms {
		byValue = append(byValue, cm.Namespace+"/"+cm.Name)
	}
	cms, err = indexer.TypedIndex("color", like)
	if err != nil {
		return nil, nil, nil, err
	}
	for _, cm := range cms {
		byObject = append(byObject, cm.Namespace+"/"+cm.Name)
	}
	for _, obj := range informer.GetStore().List() {
		stored = append(stored, fmt.Sprintf("%T", obj))
	}
	slices.Sort(byValue)
	slices.Sort(byObject)
	return byValue, byObject, slices.Compact(slices.Sorted(slices.Values(stored))), nil
}

// TestTypedInformer: code written against cache.TypedSharedIndexInformer
// (informer-gen's ConfigMapIndexInformer) takes a Handle through
// generic.TypedInformer, with either store: its typed indexers and
// handlers work, and its reads and handlers get decoded objects from a
// compact store. Before, Informer[T] was neither that interface nor had a
// way to one.
func TestTypedInformer(t *testing.T) {
	tests := []struct {
		name string
		opts []generic.InformerOption
	}{
		{name: "default store"},
		{name: "compact store", opts: []generic.InformerOption{generic.WithCompactStore(0)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := testContext(t)
			defer cancel()
			server := newShardServer(true, false)
			for name, color := range map[string]string{"sky": "blue", "sea": "blue", "grass": "green"} {
				server.apply(watch.Added, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: server.newUID()},
					Data: map[string]string{"color": color}})
			}
			factory := newFactory[*corev1.ConfigMap](server.Source, nil, asFactoryOptions(tc.opts)...)
			defer factory.Shutdown()
			handle := acquire(factory, configMapsGVR)
			defer handle.Release()
			user := &upstreamUser{}
			if err := user.setUp(generic.TypedInformer[*corev1.ConfigMap](handle)); err != nil {
				t.Fatal(err)
			}
			factory.Start(ctx)
			if err := factory.WaitForCacheSync(ctx).AsError(); err != nil {
				t.Fatal(err)
			}
			server.delete("sea")
			waitUntil(t, "the handler is told of the delete", func() bool { return len(user.recorded()) == 4 })

			typed := generic.TypedInformer[*corev1.ConfigMap](handle)
			byValue, byObject, stored, err := user.blue(typed, &corev1.ConfigMap{Data: map[string]string{"color": "blue"}})
			if err != nil {
				t.Fatal(err)
			}
			got := map[string][]string{"ByTypedIndex": byValue, "TypedIndex": byObject, "GetStore": stored, "events": slices.Sorted(slices.Values(user.recorded()))}
			want := map[string][]string{
				"ByTypedIndex": {"default/sky"},
				"TypedIndex":   {"default/sky"},
				"GetStore":     {"*v1.ConfigMap"},
				"events":       {"add grass", "add sea", "add sky", "delete sea"},
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("what the upstream code saw (-want +got):\n%s", diff)
			}
			if !typed.HasSynced() || typed.IsStopped() {
				t.Errorf("HasSynced %v, IsStopped %v: want the handle's informer's, synced and running", typed.HasSynced(), typed.IsStopped())
			}
		})
	}
}

// TestTypedIndexerNeverPanics puts a ConfigMap into a Pod informer's cache
// (a shared indexer misused, as NewLister's doc has it): the typed
// indexer's reads return the Pods with an error wrapping
// ErrUnexpectedType, and its AddTypedIndexers reports the ConfigMap and
// says the index is partial. client-go's wrapper
// (cache.NewTypedSharedIndexInformer) type-asserts and panics on each.
func TestTypedIndexerNeverPanics(t *testing.T) {
	stores := []struct {
		name string
		opts []generic.InformerOption
	}{
		{name: "default store"},
		{name: "compact store", opts: []generic.InformerOption{generic.WithCompactStore(0)}},
	}
	for _, store := range stores {
		t.Run(store.name, func(t *testing.T) {
			first, _ := podLists(t, true)
			errs := make(errorSink, 100)
			informer := newInformer[*corev1.Pod](newScriptedListerWatcher(first), podsGVR, nil, append(store.opts,
				generic.WithErrorHandler(errs.handle),
				generic.WithIndexers(cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}))...)
			defer runSynced(t, informer)()
			stray := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "team-b", Name: "stray"}}
			if err := informer.Informer().GetIndexer().Add(stray); err != nil {
				t.Fatal(err)
			}
			indexer := generic.TypedInformer(informer).GetTypedIndexer()
			if err := indexer.AddTypedIndexers(cache.TypedIndexers[*corev1.Pod]{"image": func(pod *corev1.Pod) ([]string, error) {
				return []string{pod.Spec.Containers[0].Image}, nil
			}}); err != nil {
				t.Fatal(err)
			}
			var indexErr *generic.IndexError
			if err := errs.next(t); !errors.As(err, &indexErr) || !errors.Is(err, generic.ErrUnexpectedType) || indexErr.Key != "team-b/stray" {
				t.Errorf("reported %v, want an *IndexError of team-b/stray wrapping ErrUnexpectedType", err)
			}

			type answer struct {
				Keys       []string
				WrongType  bool
				Partial    []string
				OtherError bool
			}
			answerOf := func(pods []*corev1.Pod, err error) answer {
				a := answer{Keys: keysOf(t, pods), WrongType: errors.Is(err, generic.ErrUnexpectedType)}
				var partial *generic.PartialIndexError
				if errors.As(err, &partial) {
					a.Partial = partial.Keys
				}
				a.OtherError = err != nil && !a.WrongType && a.Partial == nil
				return a
			}
			tests := []struct {
				name string
				read func() ([]*corev1.Pod, error)
				want answer
			}{
				{
					name: "ByTypedIndex meets the ConfigMap",
					read: func() ([]*corev1.Pod, error) { return indexer.ByTypedIndex(cache.NamespaceIndex, "team-b") },
					want: answer{Keys: []string{"team-b/web-0"}, WrongType: true},
				},
				{
					name: "TypedIndex meets the ConfigMap",
					read: func() ([]*corev1.Pod, error) {
						return indexer.TypedIndex(cache.NamespaceIndex, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "team-b"}})
					},
					want: answer{Keys: []string{"team-b/web-0"}, WrongType: true},
				},
				{
					name: "an index added with the ConfigMap cached is partial",
					read: func() ([]*corev1.Pod, error) { return indexer.ByTypedIndex("image", "nginx:1.27") },
					want: answer{Keys: []string{"team-a/web-0", "team-a/web-1", "team-b/web-0"}, Partial: []string{"team-b/stray"}},
				},
				{
					name: "an unknown index is the indexer's error",
					read: func() ([]*corev1.Pod, error) { return indexer.ByTypedIndex("nope", "x") },
					want: answer{Keys: []string{}, OtherError: true},
				},
			}
			for _, tc := range tests {
				t.Run(tc.name, func(t *testing.T) {
					pods, err := tc.read()
					if diff := cmp.Diff(tc.want, answerOf(pods, err)); diff != "" {
						t.Errorf("answer (-want +got):\n%s\nerror: %v", diff, err)
					}
				})
			}
		})
	}
}

// TestTypedInformerOfNil: there is no typed informer of a nil Informer.
func TestTypedInformerOfNil(t *testing.T) {
	tests := []struct {
		name     string
		informer generic.Informer[*corev1.Pod]
	}{
		{name: "nil interface"},
		{name: "nil Handle", informer: generic.Handle[*corev1.Pod](nil)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := generic.TypedInformer(tc.informer); got != nil {
				t.Errorf("TypedInformer(nil) = %v, want nil", got)
			}
		})
	}
}

// Code written against informer-gen's typed informers compiles with ours.
var (
	_ corev1informers.PodIndexInformer            = generic.TypedInformer[*corev1.Pod](nil)
	_ cache.TypedSharedIndexInformer[*corev1.Pod] = generic.TypedInformer(generic.Informer[*corev1.Pod](nil))
)
