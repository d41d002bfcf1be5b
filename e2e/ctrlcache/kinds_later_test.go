package ctrlcache

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-api/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/generic-informers/generic/ctrlcache"
	"github.com/generic-informers/generic/e2e/internal/cluster"
	"github.com/generic-informers/generic/internal/fixtures"
	"github.com/generic-informers/generic/internal/widget"
)

// The kinds of testdata/later-crds.yaml: Sprockets are namespaced, Cogs
// cluster-scoped. Their typed Go type is widget.Widget (a spec with a
// size), named by its kind on each object read.
var (
	laterGroupVersion = schema.GroupVersion{Group: "later.example.com", Version: "v1"}
	sprocketGVK       = laterGroupVersion.WithKind("Sprocket")
	cogGVK            = laterGroupVersion.WithKind("Cog")
)

// laterScheme is client-go's scheme with widget.Widget as Sprocket and Cog.
func laterScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	for _, gvk := range []schema.GroupVersionKind{sprocketGVK, cogGVK} {
		scheme.AddKnownTypeWithName(gvk, &widget.Widget{})
		scheme.AddKnownTypeWithName(gvk.GroupVersion().WithKind(gvk.Kind+"List"), &widget.WidgetList{})
	}
	metav1.AddToGroupVersion(scheme, laterGroupVersion)
	return scheme
}

// typedOf is an empty typed object of gvk.
func typedOf(gvk schema.GroupVersionKind) *widget.Widget {
	return &widget.Widget{TypeMeta: metav1.TypeMeta{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind}}
}

// establishedAt watches the CRD name and returns a function that waits
// for the time its Established condition was first seen true.
func establishedAt(ctx context.Context, t *testing.T, c *cluster.Cluster, name string) func() time.Time {
	t.Helper()
	w, err := c.Extensions.ApiextensionsV1().CustomResourceDefinitions().Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + name})
	if err != nil {
		t.Fatal(err)
	}
	seen := make(chan time.Time, 1)
	go func() {
		defer w.Stop()
		for e := range w.ResultChan() {
			crd, ok := e.Object.(*apiextensionsv1.CustomResourceDefinition)
			if !ok || e.Type == watch.Deleted {
				continue
			}
			for _, cond := range crd.Status.Conditions {
				if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
					seen <- time.Now()
					return
				}
			}
		}
	}()
	return func() time.Time {
		select {
		case at := <-seen:
			return at
		case <-ctx.Done():
			t.Fatalf("CRD %s: not seen Established", name)
			return time.Time{}
		}
	}
}

// TestKindsInstalledLater: controller-runtime's cache fails a read of a
// kind whose CRD is not installed with no-kind-match, and this library's
// informer of such a kind synced only when its backoff next came round:
// 1 s doubling to 30 s, so up to 30 s after the CRD was Established
// (and the reflector's own backoff on top), while only the typed view
// followed the kind at all. With WaitForUnservedKinds, a Get of such a
// kind, in every view and scope, in a cache of every namespace or of one,
// blocks, and returns within about a second of the CRD's Established
// condition, however long after the cache started: here 20 s, when the
// old backoff's next probe was 16 s away. A GetInformer that must not
// block returns at once and syncs as soon. Once served, the cache holds
// the objects created. Without WaitForUnservedKinds, a read of a kind not
// served is controller-runtime's no-kind-match error.
func TestKindsInstalledLater(t *testing.T) {
	// The bound asserted is generous (the machine is loaded, the race
	// detector on); the delays measured are logged. The old backoff's
	// next probe came at least 10 s after the CRDs were Established.
	const (
		installAfter = 20 * time.Second
		bound        = 8 * time.Second
	)
	ns, cl := testNamespace(t, 0)
	c, err := cluster.New(server.Config)
	if err != nil {
		t.Fatal(err)
	}
	crdNames := []string{"sprockets.later.example.com", "cogs.later.example.com"}
	// Registered before the caches start, so run after they stopped.
	t.Cleanup(func() {
		for _, name := range crdNames {
			if err := c.DeleteCRD(context.Background(), name); err != nil {
				t.Errorf("delete CRD %s: %v", name, err)
			}
		}
	})
	scheme := laterScheme(t)
	newLaterCache := func(opts crcache.Options) crcache.Cache {
		opts.Scheme = scheme
		c, err := ctrlcache.BuilderWithOptions(ctrlcache.Options{WaitForUnservedKinds: true})(server.Config, opts)
		if err != nil {
			t.Fatal(err)
		}
		startCache(t, c)
		return c
	}
	caches := map[string]crcache.Cache{
		"every namespace": newLaterCache(crcache.Options{}),
		"one namespace":   newLaterCache(crcache.Options{DefaultNamespaces: map[string]crcache.Config{ns: {}}}),
	}
	sprocketKey := client.ObjectKey{Namespace: ns, Name: "s-1"}
	cogKey := client.ObjectKey{Name: ns + "-c-1"}
	tests := []struct {
		name  string
		cache string
		crd   string
		key   client.ObjectKey
		obj   func() client.Object
	}{
		{name: "typed, namespaced", cache: "every namespace", crd: "sprockets.later.example.com", key: sprocketKey, obj: func() client.Object { return typedOf(sprocketGVK) }},
		{name: "unstructured, namespaced", cache: "every namespace", crd: "sprockets.later.example.com", key: sprocketKey, obj: func() client.Object { return unstructuredOf(sprocketGVK) }},
		{name: "metadata, namespaced", cache: "every namespace", crd: "sprockets.later.example.com", key: sprocketKey, obj: func() client.Object { return metadataOf(sprocketGVK) }},
		{name: "typed, cluster-scoped", cache: "every namespace", crd: "cogs.later.example.com", key: cogKey, obj: func() client.Object { return typedOf(cogGVK) }},
		{name: "unstructured, cluster-scoped", cache: "every namespace", crd: "cogs.later.example.com", key: cogKey, obj: func() client.Object { return unstructuredOf(cogGVK) }},
		{name: "metadata, cluster-scoped", cache: "every namespace", crd: "cogs.later.example.com", key: cogKey, obj: func() client.Object { return metadataOf(cogGVK) }},
		{name: "DefaultNamespaces: typed, namespaced", cache: "one namespace", crd: "sprockets.later.example.com", key: sprocketKey, obj: func() client.Object { return typedOf(sprocketGVK) }},
		{name: "DefaultNamespaces: unstructured, cluster-scoped", cache: "one namespace", crd: "cogs.later.example.com", key: cogKey, obj: func() client.Object { return unstructuredOf(cogGVK) }},
	}

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	// Each Get blocks until its kind is served; returned records when.
	type returned struct {
		at  time.Time
		err error
	}
	results := make([]chan returned, len(tests))
	for i, tc := range tests {
		results[i] = make(chan returned, 1)
		go func() {
			err := caches[tc.cache].Get(ctx, tc.key, tc.obj())
			results[i] <- returned{at: time.Now(), err: err}
		}()
	}
	// A GetInformer that must not block returns at once, not synced.
	informer, err := caches["every namespace"].GetInformer(ctx, unstructuredOf(sprocketGVK), crcache.BlockUntilSynced(false))
	if err != nil {
		t.Fatalf("GetInformer(BlockUntilSynced(false)) of a kind not served: %v", err)
	}
	if informer.HasSynced() {
		t.Fatal("the informer of a kind not served has synced")
	}
	var syncedMu sync.Mutex
	var syncedAt time.Time
	go func() {
		_ = wait.PollUntilContextCancel(ctx, 10*time.Millisecond, true, func(context.Context) (bool, error) {
			if !informer.HasSynced() {
				return false, nil
			}
			syncedMu.Lock()
			defer syncedMu.Unlock()
			syncedAt = time.Now()
			return true, nil
		})
	}()

	// Without WaitForUnservedKinds, controller-runtime's answer: no match.
	plain := newCache(t, crcache.Options{Scheme: scheme})
	startCache(t, plain)
	for _, obj := range []client.Object{typedOf(sprocketGVK), unstructuredOf(sprocketGVK), metadataOf(cogGVK)} {
		if err := plain.Get(ctx, sprocketKey, obj); !meta.IsNoMatchError(err) {
			t.Errorf("Get of %T of a kind not served, without WaitForUnservedKinds: %v, want a no-kind-match error", obj, err)
		}
	}

	select {
	case <-time.After(installAfter):
	case r := <-results[0]:
		t.Fatalf("a Get of a kind not served returned before its CRD was installed: %v", r.err)
	}
	established := map[string]func() time.Time{}
	for _, name := range crdNames {
		established[name] = establishedAt(ctx, t, c, name)
	}
	crds, err := fixtures.Load("testdata/later-crds.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Apply(ctx, crds...); err != nil {
		t.Fatal(err)
	}
	at := map[string]time.Time{}
	for name, seen := range established {
		at[name] = seen()
	}

	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var r returned
			select {
			case r = <-results[i]:
			case <-ctx.Done():
				t.Fatal("the Get still blocks")
			}
			if !apierrors.IsNotFound(r.err) {
				t.Errorf("Get once served: %v, want NotFound (no object yet)", r.err)
			}
			delay := r.at.Sub(at[tc.crd])
			t.Logf("returned %v after the CRD was Established", delay.Round(time.Millisecond))
			if delay > bound {
				t.Errorf("returned %v after the CRD was Established, want at most %v", delay, bound)
			}
		})
	}
	t.Run("GetInformer(BlockUntilSynced(false))", func(t *testing.T) {
		if err := wait.PollUntilContextCancel(ctx, 10*time.Millisecond, true, func(context.Context) (bool, error) { return informer.HasSynced(), nil }); err != nil {
			t.Fatal("the informer never synced")
		}
		syncedMu.Lock()
		delay := syncedAt.Sub(at["sprockets.later.example.com"])
		syncedMu.Unlock()
		t.Logf("synced %v after the CRD was Established", delay.Round(time.Millisecond))
		if delay > bound {
			t.Errorf("synced %v after the CRD was Established, want at most %v", delay, bound)
		}
	})

	// Served: the cache holds what is created now, in every view.
	sprocket := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"size": int64(3)}}}
	sprocket.SetGroupVersionKind(sprocketGVK)
	sprocket.SetNamespace(sprocketKey.Namespace)
	sprocket.SetName(sprocketKey.Name)
	cog := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"size": int64(7)}}}
	cog.SetGroupVersionKind(cogGVK)
	cog.SetName(cogKey.Name)
	for _, obj := range []client.Object{sprocket, cog} {
		if err := cl.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range tests {
		t.Run(tc.name+": cached once served", func(t *testing.T) {
			out := tc.obj()
			err := wait.PollUntilContextCancel(ctx, 20*time.Millisecond, true, func(context.Context) (bool, error) {
				return caches[tc.cache].Get(ctx, tc.key, out) == nil, nil
			})
			if err != nil {
				t.Fatalf("%s never cached", tc.key)
			}
			if diff := cmp.Diff(tc.key, client.ObjectKeyFromObject(out)); diff != "" {
				t.Errorf("key of the object read (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.obj().GetObjectKind().GroupVersionKind(), out.GetObjectKind().GroupVersionKind()); diff != "" {
				t.Errorf("kind of the object read (-want +got):\n%s", diff)
			}
		})
	}
}
