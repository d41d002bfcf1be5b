package metadata_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	clientmetadata "k8s.io/client-go/metadata"
	metadatafake "k8s.io/client-go/metadata/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/metadata"
)

// TestFactoryListers reads, through the typed API, what a factory fed by the
// fake metadata client (generic.MetadataSource) cached.
func TestFactoryListers(t *testing.T) {
	factory := newTypedFactory(t, newClient(t, seed()...))
	pods := acquire(t, factory, podsGVR)
	namespaces := acquire(t, factory, namespacesGVR)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	factory.Start(ctx)
	if err := factory.WaitForCacheSync(ctx).AsError(); err != nil {
		t.Fatal(err)
	}

	one := func(obj *metav1.PartialObjectMetadata, err error) ([]*metav1.PartialObjectMetadata, error) {
		if err != nil {
			return nil, err
		}
		return []*metav1.PartialObjectMetadata{obj}, nil
	}
	tests := []struct {
		name     string
		read     func() ([]*metav1.PartialObjectMetadata, error)
		want     []string
		notFound bool
	}{{
		name: "List everything",
		read: func() ([]*metav1.PartialObjectMetadata, error) { return pods.Lister().List(labels.Everything()) },
		want: []string{"team-a/db-0", "team-a/web-0", "team-b/web-0"},
	}, {
		name: "List by label",
		read: func() ([]*metav1.PartialObjectMetadata, error) {
			return pods.Lister().List(labels.SelectorFromSet(labels.Set{"app": "web"}))
		},
		want: []string{"team-a/web-0", "team-b/web-0"},
	}, {
		name: "Namespace List",
		read: func() ([]*metav1.PartialObjectMetadata, error) {
			return pods.Lister().Namespace("team-a").List(labels.Everything())
		},
		want: []string{"team-a/db-0", "team-a/web-0"},
	}, {
		name: "Namespace Get",
		read: func() ([]*metav1.PartialObjectMetadata, error) {
			return one(pods.Lister().Namespace("team-b").Get("web-0"))
		},
		want: []string{"team-b/web-0"},
	}, {
		name: "Namespace Get of a missing object",
		read: func() ([]*metav1.PartialObjectMetadata, error) {
			return one(pods.Lister().Namespace("team-b").Get("db-0"))
		},
		notFound: true,
	}, {
		name: "Get of a cluster-scoped object",
		read: func() ([]*metav1.PartialObjectMetadata, error) { return one(namespaces.Lister().Get("team-a")) },
		want: []string{"team-a"},
	}, {
		name:     "Get of a namespaced object by name alone",
		read:     func() ([]*metav1.PartialObjectMetadata, error) { return one(pods.Lister().Get("web-0")) },
		notFound: true,
	}, {
		name: "ByIndex namespace",
		read: func() ([]*metav1.PartialObjectMetadata, error) {
			return pods.Lister().ByIndex(cache.NamespaceIndex, "team-b")
		},
		want: []string{"team-b/web-0"},
	}, {
		name: "metadatalister.New over the same indexer",
		read: func() ([]*metav1.PartialObjectMetadata, error) {
			return metadata.New(pods.Informer().GetIndexer(), podsGVR).Namespace("team-a").List(labels.Everything())
		},
		want: []string{"team-a/db-0", "team-a/web-0"},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.read()
			if tc.notFound {
				if !apierrors.IsNotFound(err) {
					t.Fatalf("got error %v, want a NotFound error", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, keys(got)); diff != "" {
				t.Errorf("keys (-want +got):\n%s", diff)
			}
		})
	}
}

// recorder is a typed event handler that sends one line per event,
// the initial list's adds left out.
type recorder chan string

func (r recorder) OnAdd(obj *metav1.PartialObjectMetadata, isInInitialList bool) {
	if !isInInitialList {
		r <- fmt.Sprintf("add %s/%s %v", obj.Namespace, obj.Name, obj.Labels)
	}
}

func (r recorder) OnUpdate(oldObj, newObj *metav1.PartialObjectMetadata) {
	r <- fmt.Sprintf("update %s/%s %v -> %v", newObj.Namespace, newObj.Name, oldObj.Labels, newObj.Labels)
}

func (r recorder) OnDelete(obj cache.DeletedObject[*metav1.PartialObjectMetadata]) {
	r <- fmt.Sprintf("delete %s %v (final state unknown: %t)", obj.GetKey(), obj.OptionalObj.Labels, obj.FinalStateUnknown != nil)
}

// TestTypedHandlerEvents changes objects through the fake metadata client
// and checks what a typed handler receives.
func TestTypedHandlerEvents(t *testing.T) {
	tests := []struct {
		name    string
		trigger func(ctx context.Context, pods clientmetadata.ResourceInterface) error
		want    string
	}{{
		name: "create",
		trigger: func(_ context.Context, pods clientmetadata.ResourceInterface) error {
			_, err := pods.(metadatafake.MetadataClient).CreateFake(
				partial("Pod", "team-a", "web-1", map[string]string{"app": "web"}), metav1.CreateOptions{})
			return err
		},
		want: "add team-a/web-1 map[app:web]",
	}, {
		name: "update",
		trigger: func(_ context.Context, pods clientmetadata.ResourceInterface) error {
			_, err := pods.(metadatafake.MetadataClient).UpdateFake(
				partial("Pod", "team-a", "web-0", map[string]string{"app": "api"}), metav1.UpdateOptions{})
			return err
		},
		want: "update team-a/web-0 map[app:web] -> map[app:api]",
	}, {
		name: "delete",
		trigger: func(ctx context.Context, pods clientmetadata.ResourceInterface) error {
			return pods.Delete(ctx, "db-0", metav1.DeleteOptions{})
		},
		want: "delete team-a/db-0 map[app:db] (final state unknown: false)",
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			client := newClient(t, seed()...)
			factory := newTypedFactory(t, client)
			pods := acquire(t, factory, podsGVR)
			events := make(recorder, 10)
			if _, err := pods.AddEventHandler(events); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			factory.Start(ctx)
			if err := factory.WaitForCacheSync(ctx).AsError(); err != nil {
				t.Fatal(err)
			}
			waitForWatch(t, client, podsGVR)

			if err := tc.trigger(ctx, client.Resource(podsGVR).Namespace("team-a")); err != nil {
				t.Fatal(err)
			}
			select {
			case got := <-events:
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("event (-want +got):\n%s", diff)
				}
			case <-ctx.Done():
				t.Fatalf("no event: %v", ctx.Err())
			}
		})
	}
}

// TestDropInFactory uses the client-go-shaped API and checks what it shares
// and serves; Shutdown ends every goroutine even though the stop channel
// given to Start is never closed.
func TestDropInFactory(t *testing.T) {
	factory := metadata.NewFilteredSharedInformerFactory(newClient(t, seed()...), 0, "team-a", nil)
	pods := factory.ForResource(podsGVR)
	if pods != factory.ForResource(podsGVR) {
		t.Error("ForResource of the same GVR returned another informer")
	}
	stop := make(chan struct{}) // never closed
	factory.Start(stop)
	timeout, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if diff := cmp.Diff(map[schema.GroupVersionResource]bool{podsGVR: true}, factory.WaitForCacheSync(timeout.Done())); diff != "" {
		t.Fatalf("synced (-want +got):\n%s", diff)
	}
	got, err := pods.Lister().List(labels.Everything())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"team-a/db-0", "team-a/web-0"}, keys(got)); diff != "" {
		t.Errorf("pods in team-a (-want +got):\n%s", diff)
	}
	obj, err := pods.Lister().ByNamespace("team-a").Get("web-0")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"app": "web"}, obj.(*metav1.PartialObjectMetadata).Labels); diff != "" {
		t.Errorf("labels of team-a/web-0 (-want +got):\n%s", diff)
	}
	factory.Shutdown()
	goleak.VerifyNone(t)
}

// TestDropInFactoryOptions: the namespace, tweak and transform of the
// client-go-shaped constructors reach the informers.
func TestDropInFactoryOptions(t *testing.T) {
	webOnly := func(o *metav1.ListOptions) { o.LabelSelector = "app=web" }
	annotate := func(obj any) (any, error) {
		m := obj.(*metav1.PartialObjectMetadata)
		m.Annotations = map[string]string{"seen": "yes"}
		return m, nil
	}
	tests := []struct {
		name    string
		factory func(clientmetadata.Interface) metadata.SharedInformerFactory
		want    map[string]map[string]string // key: annotations
	}{{
		name: "NewSharedInformerFactory",
		factory: func(c clientmetadata.Interface) metadata.SharedInformerFactory {
			return metadata.NewSharedInformerFactory(c, 0)
		},
		want: map[string]map[string]string{"team-a/db-0": nil, "team-a/web-0": nil, "team-b/web-0": nil},
	}, {
		name: "NewFilteredSharedInformerFactory with a namespace and a tweak",
		factory: func(c clientmetadata.Interface) metadata.SharedInformerFactory {
			return metadata.NewFilteredSharedInformerFactory(c, 0, "team-b", webOnly)
		},
		want: map[string]map[string]string{"team-b/web-0": nil},
	}, {
		name: "NewSharedInformerFactoryWithOptions with a transform",
		factory: func(c clientmetadata.Interface) metadata.SharedInformerFactory {
			return metadata.NewSharedInformerFactoryWithOptions(c, 0, metadata.WithTransform(annotate), nil)
		},
		want: map[string]map[string]string{
			"team-a/db-0": {"seen": "yes"}, "team-a/web-0": {"seen": "yes"}, "team-b/web-0": {"seen": "yes"},
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			factory := tc.factory(newClient(t, seed()...))
			defer factory.Shutdown()
			pods := factory.ForResource(podsGVR)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			factory.Start(ctx.Done())
			factory.WaitForCacheSync(ctx.Done())
			objs, err := pods.Lister().List(labels.Everything())
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]map[string]string{}
			for _, obj := range objs {
				m := obj.(*metav1.PartialObjectMetadata)
				got[m.Namespace+"/"+m.Name] = m.Annotations
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("cached pods and their annotations (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDropInDeferredStart: as with client-go's factory, an informer asked
// for after Start runs only at the next Start.
func TestDropInDeferredStart(t *testing.T) {
	factory := metadata.NewSharedInformerFactory(newClient(t, seed()...), 0)
	defer factory.Shutdown()
	stop := make(chan struct{}) // never closed
	factory.Start(stop)
	pods := factory.ForResource(podsGVR)
	closed := make(chan struct{})
	close(closed)
	if diff := cmp.Diff(map[schema.GroupVersionResource]bool{}, factory.WaitForCacheSync(closed)); diff != "" {
		t.Errorf("synced before the second Start (-want +got):\n%s", diff)
	}
	if pods.Informer().HasSynced() {
		t.Error("the informer asked for after Start runs before the next Start")
	}
	factory.Start(stop)
	timeout, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if diff := cmp.Diff(map[schema.GroupVersionResource]bool{podsGVR: true}, factory.WaitForCacheSync(timeout.Done())); diff != "" {
		t.Errorf("synced after the second Start (-want +got):\n%s", diff)
	}
}

// TestDropInWaitForCacheSync: the client-go-shaped wait (which polls, as
// client-go's does) reports which started informers synced, and returns when
// its stop channel closes or when the informers it waits for have stopped.
func TestDropInWaitForCacheSync(t *testing.T) {
	closed := make(chan struct{})
	close(closed)
	tests := []struct {
		name string
		// listFails makes every list of Pods fail: they never sync.
		listFails bool
		// stopInformers closes the channel given to Start before the wait.
		stopInformers bool
		waitStop      <-chan struct{}
		want          map[schema.GroupVersionResource]bool
	}{{
		name:     "synced",
		waitStop: nil, // never closed
		want:     map[schema.GroupVersionResource]bool{podsGVR: true},
	}, {
		name:      "stop channel closed before the informer can sync",
		listFails: true,
		waitStop:  closed,
		want:      map[schema.GroupVersionResource]bool{podsGVR: false},
	}, {
		name:          "the informer stopped before it could sync",
		listFails:     true,
		stopInformers: true,
		waitStop:      nil, // never closed
		want:          map[schema.GroupVersionResource]bool{podsGVR: false},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			client := newClient(t, seed()...)
			if tc.listFails {
				client.PrependReactor("list", "pods", func(clienttesting.Action) (bool, runtime.Object, error) {
					return true, nil, errors.New("no list for you")
				})
			}
			factory := metadata.NewSharedInformerFactory(client, 0)
			defer factory.Shutdown()
			factory.ForResource(podsGVR)
			startStop := make(chan struct{})
			factory.Start(startStop)
			if tc.stopInformers {
				close(startStop)
			}
			if diff := cmp.Diff(tc.want, factory.WaitForCacheSync(tc.waitStop)); diff != "" {
				t.Errorf("synced (-want +got):\n%s", diff)
			}
		})
	}
}

// TestNewFilteredMetadataInformer runs a standalone informer, as
// client-go's constructor hands it out, with an indexer of its own.
func TestNewFilteredMetadataInformer(t *testing.T) {
	byApp := cache.Indexers{"app": func(obj any) ([]string, error) {
		return []string{obj.(metav1.Object).GetLabels()["app"]}, nil
	}}
	informer := metadata.NewFilteredMetadataInformer(newClient(t, seed()...), podsGVR, metav1.NamespaceAll, 0, byApp, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	done := make(chan struct{})
	go func() {
		defer close(done)
		informer.Informer().RunWithContext(ctx)
	}()
	defer func() { cancel(); <-done }()
	if !cache.WaitForCacheSync(ctx.Done(), informer.Informer().HasSynced) {
		t.Fatal("the informer did not sync")
	}

	tests := []struct {
		name string
		read func() ([]any, error)
		want []string
	}{{
		name: "ByIndex of the given indexer",
		read: func() ([]any, error) { return informer.Informer().GetIndexer().ByIndex("app", "web") },
		want: []string{"team-a/web-0", "team-b/web-0"},
	}, {
		name: "GenericLister ByNamespace List",
		read: func() ([]any, error) {
			objs, err := informer.Lister().ByNamespace("team-a").List(labels.Everything())
			ret := make([]any, len(objs))
			for i := range objs {
				ret[i] = objs[i]
			}
			return ret, err
		},
		want: []string{"team-a/db-0", "team-a/web-0"},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.read()
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, keys(got)); diff != "" {
				t.Errorf("keys (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDropInRelease uses the Releaser extension of the client-go-shaped
// factory.
func TestDropInRelease(t *testing.T) {
	factory := metadata.NewSharedInformerFactory(newClient(t, seed()...), 0)
	defer factory.Shutdown()
	first := factory.ForResource(podsGVR)
	factory.Start(make(chan struct{}))
	releaser, ok := factory.(generic.Releaser)
	if !ok {
		t.Fatal("the factory is not a Releaser")
	}
	if diff := cmp.Diff([]bool{false, true, false}, []bool{
		releaser.Release(namespacesGVR), releaser.Release(podsGVR), releaser.Release(podsGVR),
	}); diff != "" {
		t.Errorf("Release results (-want +got):\n%s", diff)
	}
	// Release does not wait: the informer stops soon after.
	err := wait.PollUntilContextTimeout(context.Background(), time.Millisecond, 10*time.Second, true,
		func(context.Context) (bool, error) { return first.Informer().IsStopped(), nil })
	if err != nil {
		t.Error("the released informer still runs")
	}
	if factory.ForResource(podsGVR).Informer() == first.Informer() {
		t.Error("ForResource after release returned the stopped informer")
	}
}

// TestNilClient: a nil client, as an interface or as a pointer, makes lists
// fail with generic.ErrNilClient, never panic.
func TestNilClient(t *testing.T) {
	var nilPointer *clientmetadata.Client
	tests := []struct {
		name   string
		client clientmetadata.Interface
	}{
		{name: "nil interface", client: nil},
		{name: "nil pointer", client: nilPointer},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			lw := cache.ToListerWatcherWithContext(generic.MetadataSource(tc.client)(podsGVR, metav1.NamespaceAll, nil))
			if _, err := lw.ListWithContext(context.Background(), metav1.ListOptions{}); !errors.Is(err, generic.ErrNilClient) {
				t.Errorf("List error %v, want %v", err, generic.ErrNilClient)
			}
			if _, err := lw.WatchWithContext(context.Background(), metav1.ListOptions{}); !errors.Is(err, generic.ErrNilClient) {
				t.Errorf("Watch error %v, want %v", err, generic.ErrNilClient)
			}

			factory := metadata.NewSharedInformerFactory(tc.client, 0)
			defer factory.Shutdown()
			factory.ForResource(podsGVR)
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			factory.Start(ctx.Done())
			if diff := cmp.Diff(map[schema.GroupVersionResource]bool{podsGVR: false}, factory.WaitForCacheSync(ctx.Done())); diff != "" {
				t.Errorf("synced (-want +got):\n%s", diff)
			}
		})
	}
}

// TestMetadataSourceTweak: the tweak of generic.MetadataSource reaches every list and watch request,
// in the namespace asked for.
func TestMetadataSourceTweak(t *testing.T) {
	client := newClient(t, seed()...)
	lw := cache.ToListerWatcherWithContext(generic.MetadataSource(client)(podsGVR, "team-a", func(o *metav1.ListOptions) { o.LabelSelector = "app=web" }))
	list, err := lw.ListWithContext(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"team-a/web-0"}, keys(toPointers(list.(*metav1.PartialObjectMetadataList).Items))); diff != "" {
		t.Errorf("listed (-want +got):\n%s", diff)
	}
	w, err := lw.WatchWithContext(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w.Stop()
	var got []string
	for _, a := range client.Actions() {
		if r, ok := a.(clienttesting.ListAction); ok {
			got = append(got, fmt.Sprintf("%s %s %s", a.GetVerb(), a.GetNamespace(), r.GetListRestrictions().Labels))
		}
		if r, ok := a.(clienttesting.WatchAction); ok {
			got = append(got, fmt.Sprintf("%s %s %s", a.GetVerb(), a.GetNamespace(), r.GetWatchRestrictions().Labels))
		}
	}
	if diff := cmp.Diff([]string{"list team-a app=web", "watch team-a app=web"}, got); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}

func toPointers(items []metav1.PartialObjectMetadata) []*metav1.PartialObjectMetadata {
	ret := make([]*metav1.PartialObjectMetadata, len(items))
	for i := range items {
		ret[i] = &items[i]
	}
	return ret
}
