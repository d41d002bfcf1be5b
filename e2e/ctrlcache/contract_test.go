package ctrlcache

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/ctrlcache"
)

// testNamespace makes a namespace of the test's own with n ConfigMaps
// cm-0..cm-n-1, labelled parity=even|odd, and returns the namespace and a
// direct client.
func testNamespace(t *testing.T, n int) (string, client.Client) {
	t.Helper()
	cl, err := client.New(server.Config, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "ctrlcache-"}}
	if err := cl.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		parity := map[bool]string{true: "even", false: "odd"}[i%2 == 0]
		cm := &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", i), Namespace: ns.Name, Labels: map[string]string{"parity": parity, "app": "demo", "test-namespace": ns.Name}},
			Data:       map[string]string{"index": fmt.Sprint(i)},
		}
		if err := cl.Create(ctx, cm); err != nil {
			t.Fatal(err)
		}
	}
	return ns.Name, cl
}

// startCache starts c until the test ends and waits for it to be started.
func startCache(t *testing.T, c crcache.Cache) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Start: %v", err)
		}
	})
	waitCtx, waitCancel := context.WithTimeout(ctx, time.Minute)
	defer waitCancel()
	if !c.WaitForCacheSync(waitCtx) {
		t.Fatal("WaitForCacheSync: false")
	}
}

// builders are the caches the reads are checked on: the default one, and
// one that keeps ConfigMaps in the compact store (decoded on read).
var builders = []struct {
	name string
	new  crcache.NewCacheFunc
}{
	{"default store", ctrlcache.New},
	{"compact store", ctrlcache.BuilderWithOptions(ctrlcache.Options{
		ByObject: map[client.Object][]generic.InformerOption{&corev1.ConfigMap{}: {generic.WithCompactStore(2)}},
	})},
}

func newCache(t *testing.T, opts crcache.Options) crcache.Cache {
	t.Helper()
	return newCacheWith(t, ctrlcache.New, opts)
}

func newCacheWith(t *testing.T, newFunc crcache.NewCacheFunc, opts crcache.Options) crcache.Cache {
	t.Helper()
	c, err := newFunc(server.Config, opts)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestReadsAnswerAsTheServer(t *testing.T) {
	for _, b := range builders {
		t.Run(b.name, func(t *testing.T) { testReadsAnswerAsTheServer(t, b.new) })
	}
}

func testReadsAnswerAsTheServer(t *testing.T, newFunc crcache.NewCacheFunc) {
	ns, cl := testNamespace(t, 6)
	c := newCacheWith(t, newFunc, crcache.Options{})
	startCache(t, c)
	ctx := context.Background()
	key := client.ObjectKey{Namespace: ns, Name: "cm-2"}
	want := &corev1.ConfigMap{}
	if err := cl.Get(ctx, key, want); err != nil {
		t.Fatal(err)
	}
	gvk := corev1.SchemeGroupVersion.WithKind("ConfigMap")
	want.SetGroupVersionKind(gvk)

	tests := []struct {
		name string
		out  client.Object
		want func() any
	}{
		{"typed", &corev1.ConfigMap{}, func() any { return want }},
		{"unstructured", unstructuredOf(gvk), func() any {
			content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(want)
			if err != nil {
				t.Fatal(err)
			}
			return &unstructured.Unstructured{Object: content}
		}},
		{"metadata", metadataOf(gvk), func() any {
			return &metav1.PartialObjectMetadata{TypeMeta: want.TypeMeta, ObjectMeta: want.ObjectMeta}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := c.Get(ctx, key, tc.out); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want(), any(tc.out)); diff != "" {
				t.Errorf("Get (-want +got):\n%s", diff)
			}
		})
	}
}

func unstructuredOf(gvk schema.GroupVersionKind) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	return u
}

func metadataOf(gvk schema.GroupVersionKind) *metav1.PartialObjectMetadata {
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(gvk)
	return m
}

func TestListOptions(t *testing.T) {
	for _, b := range builders {
		t.Run(b.name, func(t *testing.T) { testListOptions(t, b.new) })
	}
}

func testListOptions(t *testing.T, newFunc crcache.NewCacheFunc) {
	ns, _ := testNamespace(t, 6)
	c := newCacheWith(t, newFunc, crcache.Options{})
	ctx := context.Background()
	if err := c.IndexField(ctx, &corev1.ConfigMap{}, "data.index", func(o client.Object) []string {
		return []string{o.(*corev1.ConfigMap).Data["index"]}
	}); err != nil {
		t.Fatal(err)
	}
	startCache(t, c)

	tests := []struct {
		name    string
		opts    []client.ListOption
		want    []string
		wantErr bool
	}{
		{"namespace", []client.ListOption{client.InNamespace(ns)}, []string{"cm-0", "cm-1", "cm-2", "cm-3", "cm-4", "cm-5"}, false},
		{"labels", []client.ListOption{client.InNamespace(ns), client.MatchingLabels{"parity": "odd"}}, []string{"cm-1", "cm-3", "cm-5"}, false},
		{"index", []client.ListOption{client.InNamespace(ns), client.MatchingFields{"data.index": "4"}}, []string{"cm-4"}, false},
		{"index in every namespace", []client.ListOption{client.MatchingFields{"data.index": "4"}, client.MatchingLabels{"app": "demo"}}, nil, false},
		{"continue", []client.ListOption{client.InNamespace(ns), client.Continue("x")}, nil, true},
		{"non-exact field selector", []client.ListOption{client.InNamespace(ns), client.MatchingFieldsSelector{Selector: mustField(t, "data.index!=4")}}, nil, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			list := &corev1.ConfigMapList{}
			err := c.List(ctx, list, tc.opts...)
			if (err != nil) != tc.wantErr {
				t.Fatalf("List: error %v, want error %v", err, tc.wantErr)
			}
			if err != nil {
				return
			}
			var got []string
			for _, cm := range list.Items {
				if cm.Namespace == ns {
					got = append(got, cm.Name)
				}
			}
			if tc.want == nil {
				tc.want = []string{"cm-4"}
			}
			if diff := cmp.Diff(tc.want, sorted(got)); diff != "" {
				t.Errorf("List (-want +got):\n%s", diff)
			}
		})
	}

	t.Run("limit", func(t *testing.T) {
		list := &corev1.ConfigMapList{}
		if err := c.List(ctx, list, client.InNamespace(ns), client.Limit(4)); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]any{4, "continue-not-supported"}, []any{len(list.Items), list.Continue}); diff != "" {
			t.Errorf("List with Limit 4 (-want +got):\n%s", diff)
		}
	})
}

func TestReadErrors(t *testing.T) {
	ns, _ := testNamespace(t, 1)
	ctx := context.Background()

	t.Run("not started", func(t *testing.T) {
		c := newCache(t, crcache.Options{})
		err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "cm-0"}, &corev1.ConfigMap{})
		var notStarted *crcache.ErrCacheNotStarted
		if !errors.As(err, &notStarted) {
			t.Fatalf("Get before Start: %v, want ErrCacheNotStarted", err)
		}
	})
	t.Run("not cached", func(t *testing.T) {
		c := newCache(t, crcache.Options{ReaderFailOnMissingInformer: true})
		startCache(t, c)
		err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "cm-0"}, &corev1.ConfigMap{})
		var notCached *crcache.ErrResourceNotCached
		if !errors.As(err, &notCached) {
			t.Fatalf("Get of a kind without informer: %v, want ErrResourceNotCached", err)
		}
	})
	t.Run("not found", func(t *testing.T) {
		c := newCache(t, crcache.Options{})
		startCache(t, c)
		err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "missing"}, &corev1.ConfigMap{})
		status, ok := err.(apierrors.APIStatus)
		if !apierrors.IsNotFound(err) || !ok {
			t.Fatalf("Get of a missing object: %v, want NotFound", err)
		}
		details := status.Status().Details
		if diff := cmp.Diff([]string{"", "configmaps", "missing"}, []string{details.Group, details.Kind, details.Name}); diff != "" {
			t.Errorf("NotFound's group, resource and name (-want +got):\n%s", diff)
		}
	})
}

// TestCopiesAreCallers holds controller-runtime's promise: with deep copy
// on (the default), what Get and List return is the caller's to change,
// and changing it changes no cached object, even those that share maps,
// slices and strings with it in the cache (equal labels are one map
// there: cm-2 and cm-4 share theirs).
func TestCopiesAreCallers(t *testing.T) {
	for _, b := range builders {
		t.Run(b.name, func(t *testing.T) { testCopiesAreCallers(t, b.new) })
	}
}

func testCopiesAreCallers(t *testing.T, newFunc crcache.NewCacheFunc) {
	ns, _ := testNamespace(t, 6)
	c := newCacheWith(t, newFunc, crcache.Options{})
	startCache(t, c)
	ctx := context.Background()
	before := &corev1.ConfigMapList{}
	if err := c.List(ctx, before, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	single := &corev1.ConfigMap{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "cm-4"}, single); err != nil {
		t.Fatal(err)
	}
	single.Labels["parity"] = "changed"
	single.Data["index"] = "changed"
	list := &corev1.ConfigMapList{}
	if err := c.List(ctx, list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for i := range list.Items {
		list.Items[i].Labels["app"] = "changed"
		list.Items[i].ManagedFields[0].Manager = "changed"
	}
	after := &corev1.ConfigMapList{}
	if err := c.List(ctx, after, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	byName := cmpopts.SortSlices(func(a, b corev1.ConfigMap) bool { return a.Name < b.Name })
	if diff := cmp.Diff(before, after, byName); diff != "" {
		t.Errorf("cached objects changed by a caller's change of its copies (-before +after):\n%s", diff)
	}
}

func mustField(t *testing.T, s string) fields.Selector {
	t.Helper()
	sel, err := fields.ParseSelector(s)
	if err != nil {
		t.Fatal(err)
	}
	return sel
}

func sorted(s []string) []string { return slices.Sorted(slices.Values(s)) }
