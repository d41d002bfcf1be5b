package generic_test

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"

	"github.com/generic-informers/generic"
)

func TestNamespaceListerByIndex(t *testing.T) {
	// testdata/pods.yaml: node-1 runs team-a's web-0 and db-0 (in that
	// order in the file), node-2 team-a/web-1 and team-b/web-0.
	indexer := indexerWith(t, only[*corev1.Pod](loadTyped(t, "testdata/pods.yaml")), cache.Indexers{"nodeName": byNodeName})
	pods := generic.NewLister[*corev1.Pod](indexer, podsGVR.GroupResource())
	_, clientGoErr := indexer.ByIndex("no-such-index", "node-1")
	if clientGoErr == nil {
		t.Fatal("the indexer's ByIndex of an unknown index gave no error")
	}
	tests := []struct {
		name      string
		namespace string
		index     string
		value     string
		wantKeys  []string
		// wantErr, if not empty, is the error wanted: the indexer's.
		wantErr string
	}{{
		name:      "a value in two namespaces gives this namespace's objects only",
		namespace: "team-b",
		index:     "nodeName",
		value:     "node-2",
		wantKeys:  []string{"team-b/web-0"},
	}, {
		name:      "the other namespace's, sorted by name",
		namespace: "team-a",
		index:     "nodeName",
		value:     "node-1",
		wantKeys:  []string{"team-a/db-0", "team-a/web-0"},
	}, {
		name:      "a value none of this namespace's objects has",
		namespace: "team-b",
		index:     "nodeName",
		value:     "node-1",
		wantKeys:  []string{},
	}, {
		name:      "a value no object has",
		namespace: "team-a",
		index:     "nodeName",
		value:     "node-9",
		wantKeys:  []string{},
	}, {
		name:      "a namespace that holds nothing",
		namespace: "team-z",
		index:     "nodeName",
		value:     "node-2",
		wantKeys:  []string{},
	}, {
		name:      "the namespace index",
		namespace: "team-a",
		index:     cache.NamespaceIndex,
		value:     "team-a",
		wantKeys:  []string{"team-a/db-0", "team-a/web-0", "team-a/web-1"},
	}, {
		name:      "NamespaceAll is every namespace, as for List",
		namespace: metav1.NamespaceAll,
		index:     "nodeName",
		value:     "node-2",
		wantKeys:  []string{"team-a/web-1", "team-b/web-0"},
	}, {
		name:      "an unknown index is the indexer's error",
		namespace: "team-a",
		index:     "no-such-index",
		value:     "node-1",
		wantErr:   clientGoErr.Error(),
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := pods.Namespace(tc.namespace).ByIndex(tc.index, tc.value)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("error = %v, want %q", err, tc.wantErr)
				}
				if got != nil {
					t.Errorf("got %d objects with the error, want none", len(got))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got == nil {
				t.Error("got a nil slice, want an empty one")
			}
			gotKeys, err := inOrder(got, nil)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantKeys, gotKeys); diff != "" {
				t.Errorf("keys, in order (-want +got):\n%s", diff)
			}
		})
	}
}

// sameNodePods returns Pods that all run on node-1, in an order that is
// not theirs: namespaces "a", "a-b" (which "a/" sorts after as a string)
// and "b"; names that sort as strings, not as numbers.
func sameNodePods() []*corev1.Pod {
	var pods []*corev1.Pod
	for _, ns := range []string{"b", "a-b", "a"} {
		for _, name := range []string{"web-9", "web-10", "db-2", "web-1", "api-0"} {
			pods = append(pods, &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
				Spec:       corev1.PodSpec{NodeName: "node-1"},
			})
		}
	}
	return pods
}

// TestByIndexOrder reads an index bucket of objects added out of order,
// several times, through Lister and NamespaceLister, over typed and
// unstructured objects: each read is sorted by namespace, then name, the
// same every time, where the indexer's order changes from call to call.
func TestByIndexOrder(t *testing.T) {
	pods := sameNodePods()
	typed := generic.NewLister[*corev1.Pod](indexerWith(t, pods, cache.Indexers{"nodeName": byNodeName}), podsGVR.GroupResource())
	var us []*unstructured.Unstructured
	for _, pod := range pods {
		content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(pod)
		if err != nil {
			t.Fatal(err)
		}
		us = append(us, &unstructured.Unstructured{Object: content})
	}
	byNode := func(obj any) ([]string, error) {
		node, _, err := unstructured.NestedString(obj.(*unstructured.Unstructured).Object, "spec", "nodeName")
		return []string{node}, err
	}
	untyped := generic.NewLister[*unstructured.Unstructured](indexerWith(t, us, cache.Indexers{"nodeName": byNode}), podsGVR.GroupResource())
	aPods := []string{"a/api-0", "a/db-2", "a/web-1", "a/web-10", "a/web-9"}
	all := slices.Concat(aPods,
		[]string{"a-b/api-0", "a-b/db-2", "a-b/web-1", "a-b/web-10", "a-b/web-9"},
		[]string{"b/api-0", "b/db-2", "b/web-1", "b/web-10", "b/web-9"})
	tests := []struct {
		name     string
		read     func() ([]string, error)
		wantKeys []string
	}{{
		name:     "Lister, typed",
		read:     func() ([]string, error) { return inOrder(typed.ByIndex("nodeName", "node-1")) },
		wantKeys: all,
	}, {
		name:     "NamespaceLister, typed",
		read:     func() ([]string, error) { return inOrder(typed.Namespace("a").ByIndex("nodeName", "node-1")) },
		wantKeys: aPods,
	}, {
		name:     "Lister, unstructured",
		read:     func() ([]string, error) { return inOrder(untyped.ByIndex("nodeName", "node-1")) },
		wantKeys: all,
	}, {
		name:     "NamespaceLister, unstructured",
		read:     func() ([]string, error) { return inOrder(untyped.Namespace("a").ByIndex("nodeName", "node-1")) },
		wantKeys: aPods,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for range 10 {
				got, err := tc.read()
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(tc.wantKeys, got); diff != "" {
					t.Fatalf("keys, in order (-want +got):\n%s", diff)
				}
			}
		})
	}
}

// inOrder returns the cache keys, in order, of what a read returned (keysOf
// sorts them), and its error.
func inOrder[T runtime.Object](objs []T, err error) ([]string, error) {
	if err != nil {
		return nil, err
	}
	keys := make([]string, 0, len(objs))
	for _, obj := range objs {
		key, err := cache.MetaNamespaceKeyFunc(obj)
		if err != nil {
			return nil, err
		}
		keys = append(keys, key)
	}
	return keys, nil
}

func TestSortByNamespaceName(t *testing.T) {
	pod := func(namespace, name string) runtime.Object {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
	}
	namespace := func(name string) runtime.Object {
		return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	}
	tests := []struct {
		name string
		objs []runtime.Object
		want []runtime.Object
	}{{
		name: "nil",
	}, {
		name: "one object",
		objs: []runtime.Object{pod("a", "web-0")},
		want: []runtime.Object{pod("a", "web-0")},
	}, {
		name: "by namespace, then by name, as strings",
		objs: []runtime.Object{pod("b", "web-0"), pod("a-b", "web-0"), pod("a", "web-10"), pod("a", "web-9")},
		want: []runtime.Object{pod("a", "web-10"), pod("a", "web-9"), pod("a-b", "web-0"), pod("b", "web-0")},
	}, {
		name: "cluster-scoped objects by name, before namespaced ones",
		objs: []runtime.Object{pod("a", "web-0"), namespace("team-b"), namespace("team-a")},
		want: []runtime.Object{namespace("team-a"), namespace("team-b"), pod("a", "web-0")},
	}, {
		name: "an object without object metadata first",
		objs: []runtime.Object{pod("a", "web-0"), &metav1.Status{Message: "no metadata"}},
		want: []runtime.Object{&metav1.Status{Message: "no metadata"}, pod("a", "web-0")},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := generic.SortByNamespaceName(tc.objs)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("sorted (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want, tc.objs); diff != "" {
				t.Errorf("objs after the sort, which is in place (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSortByNamespaceNameOfList sorts what a List returns, as a test of a
// controller does, typed and unstructured: the order of ByIndex.
func TestSortByNamespaceNameOfList(t *testing.T) {
	pods := sameNodePods()
	lister := generic.NewLister[*corev1.Pod](indexerWith(t, pods, cache.Indexers{"nodeName": byNodeName}), podsGVR.GroupResource())
	listed, err := lister.List(labels.Everything())
	if err != nil {
		t.Fatal(err)
	}
	byIndex, err := lister.ByIndex("nodeName", "node-1")
	if err != nil {
		t.Fatal(err)
	}
	want, err := inOrder(byIndex, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := inOrder(generic.SortByNamespaceName(listed), nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("sorted List (-ByIndex +got):\n%s", diff)
	}
}
