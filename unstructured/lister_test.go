package unstructured_test

import (
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apiunstructured "k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/dynamic/dynamiclister"
	"k8s.io/client-go/tools/cache"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/internal/fixtures"
	"github.com/generic-informers/generic/unstructured"
)

// The drop-in's NamespaceLister has exactly the methods of client-go's
// (each is the other), and the generic core's is one.
var (
	_ dynamiclister.NamespaceLister = unstructured.NamespaceLister(nil)
	_ unstructured.NamespaceLister  = dynamiclister.NamespaceLister(nil)
	_ unstructured.NamespaceLister  = generic.NamespaceLister[*apiunstructured.Unstructured](nil)
)

// byApp indexes an object by its label app.
func byApp(obj any) ([]string, error) {
	return []string{obj.(*apiunstructured.Unstructured).GetLabels()["app"]}, nil
}

// TestNewByIndex reads, through New, an index value whose objects are in
// two namespaces and were added out of order: New's Lister and the
// NamespaceListers of its Namespace have the generic core's ByIndex, sorted
// by namespace, then name; the shim's GenericNamespaceLister reads the same
// objects.
func TestNewByIndex(t *testing.T) {
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc, "app": byApp})
	for _, key := range [][2]string{{"team-b", "web"}, {"team-a", "web-2"}, {"team-a", "web-10"}, {"team-a", "db"}} {
		u := &apiunstructured.Unstructured{}
		u.SetAPIVersion("v1")
		u.SetKind("ConfigMap")
		u.SetNamespace(key[0])
		u.SetName(key[1])
		u.SetLabels(map[string]string{"app": "web"})
		if err := indexer.Add(u); err != nil {
			t.Fatal(err)
		}
	}
	lister := unstructured.New(indexer, configMapsGVR)
	indexed, ok := lister.(interface {
		ByIndex(indexName, indexedValue string) ([]*apiunstructured.Unstructured, error)
	})
	if !ok {
		t.Fatalf("New's Lister, a %T, has no ByIndex", lister)
	}
	namespaced := func(ns string) generic.NamespaceLister[*apiunstructured.Unstructured] {
		nl, ok := lister.Namespace(ns).(generic.NamespaceLister[*apiunstructured.Unstructured])
		if !ok {
			t.Fatalf("New's Namespace(%q) is a %T, not a generic.NamespaceLister", ns, lister.Namespace(ns))
		}
		return nl
	}
	tests := []struct {
		name string
		read func() ([]*apiunstructured.Unstructured, error)
		want []string
		// wantErr: an error and no object are wanted.
		wantErr bool
	}{{
		name: "Lister ByIndex",
		read: func() ([]*apiunstructured.Unstructured, error) { return indexed.ByIndex("app", "web") },
		want: []string{"team-a/db", "team-a/web-10", "team-a/web-2", "team-b/web"},
	}, {
		name: "NamespaceLister ByIndex",
		read: func() ([]*apiunstructured.Unstructured, error) { return namespaced("team-a").ByIndex("app", "web") },
		want: []string{"team-a/db", "team-a/web-10", "team-a/web-2"},
	}, {
		name: "NamespaceLister ByIndex of another namespace",
		read: func() ([]*apiunstructured.Unstructured, error) { return namespaced("team-b").ByIndex("app", "web") },
		want: []string{"team-b/web"},
	}, {
		name: "NamespaceLister ByIndex of a value no object has",
		read: func() ([]*apiunstructured.Unstructured, error) { return namespaced("team-b").ByIndex("app", "db") },
		want: []string{},
	}, {
		name: "NamespaceLister ByIndex of an unknown index",
		read: func() ([]*apiunstructured.Unstructured, error) {
			return namespaced("team-a").ByIndex("no-such-index", "web")
		},
		wantErr: true,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for range 5 {
				got, err := tc.read()
				if (err != nil) != tc.wantErr {
					t.Fatalf("error = %v, want error: %v", err, tc.wantErr)
				}
				if tc.wantErr {
					if got != nil {
						t.Errorf("got %d objects with the error, want none", len(got))
					}
					return
				}
				keys := make([]string, 0, len(got))
				for _, u := range got {
					keys = append(keys, u.GetNamespace()+"/"+u.GetName())
				}
				if diff := cmp.Diff(tc.want, keys); diff != "" {
					t.Fatalf("keys, in order (-want +got):\n%s", diff)
				}
			}
		})
	}
	var shim cache.GenericNamespaceLister = unstructured.NewRuntimeObjectShim(lister).ByNamespace("team-b")
	objs, err := shim.List(labels.Everything())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(1, len(objs)); diff != "" {
		t.Errorf("the shim's team-b objects (-want +got):\n%s", diff)
	}
}

// TestListOverAHandFilledIndexer fills a cache.Indexer by hand, as
// client-go's tests do, with objects whose labels take every shape
// (testdata/labels-shapes.yaml, in 20 namespaces: more objects than the
// Lister matches at a time), and lists them with label selectors through
// New and through client-go's dynamiclister.New over the same indexer:
// both return the same objects (the indexer's, not copies), across
// namespaces and in one.
func TestListOverAHandFilledIndexer(t *testing.T) {
	shapes, err := fixtures.Load("../testdata/labels-shapes.yaml")
	if err != nil {
		t.Fatal(err)
	}
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	for n := range 20 {
		for _, shape := range shapes {
			u := shape.DeepCopy()
			u.SetNamespace("team-" + strconv.Itoa(n))
			if err := indexer.Add(u); err != nil {
				t.Fatal(err)
			}
		}
	}
	ours, clientGo := unstructured.New(indexer, configMapsGVR), dynamiclister.New(indexer, configMapsGVR)
	tests := []struct {
		name     string
		selector string
	}{
		{name: "equals", selector: "app=web"},
		{name: "equals the empty value", selector: "app="},
		{name: "not equals", selector: "app!=web"},
		{name: "in", selector: "app in (web,db)"},
		{name: "not in", selector: "app notin (web)"},
		{name: "exists", selector: "app"},
		{name: "does not exist", selector: "!app"},
		{name: "two keys", selector: "tier=frontend,app=web"},
		{name: "two keys, the first absent", selector: "app,tier=backend"},
		{name: "greater than", selector: "app>2"},
		{name: "everything", selector: ""},
	}
	same := cmp.Comparer(func(a, b *apiunstructured.Unstructured) bool { return a == b })
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			selector, err := labels.Parse(tc.selector)
			if err != nil {
				t.Fatal(err)
			}
			for _, namespace := range []string{metav1.NamespaceAll, "team-7"} {
				want, wantErr := clientGoList(clientGo, namespace, selector)
				got, err := listIn(ours, namespace, selector)
				if diff := cmp.Diff(wantErr, err, cmpopts.EquateErrors()); diff != "" {
					t.Errorf("namespace %q: error (-client-go +drop-in):\n%s", namespace, diff)
				}
				if diff := cmp.Diff(generic.SortByNamespaceName(want), generic.SortByNamespaceName(got), same); diff != "" {
					t.Errorf("namespace %q: objects (-client-go +drop-in):\n%s", namespace, diff)
				}
			}
		})
	}
}

// listIn lists with selector through l, in namespace (metav1.NamespaceAll:
// List).
func listIn(l unstructured.Lister, namespace string, selector labels.Selector) ([]*apiunstructured.Unstructured, error) {
	if namespace == metav1.NamespaceAll {
		return l.List(selector)
	}
	return l.Namespace(namespace).List(selector)
}

// clientGoList is listIn through client-go's dynamiclister.
func clientGoList(l dynamiclister.Lister, namespace string, selector labels.Selector) ([]*apiunstructured.Unstructured, error) {
	if namespace == metav1.NamespaceAll {
		return l.List(selector)
	}
	return l.Namespace(namespace).List(selector)
}
