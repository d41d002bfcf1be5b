package metadata_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/metadata/metadatalister"
	"k8s.io/client-go/tools/cache"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/metadata"
)

// TestNewOverIndexer reads a plain indexer through New and through the
// cache.GenericLister shim of NewRuntimeObjectShim.
func TestNewOverIndexer(t *testing.T) {
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	for _, obj := range seed() {
		if err := indexer.Add(obj); err != nil {
			t.Fatal(err)
		}
	}
	lister := metadata.New(indexer, podsGVR)
	shim := metadata.NewRuntimeObjectShim(lister)
	tests := []struct {
		name string
		read func() ([]runtime.Object, error)
		want []string
		// notFound: the error must be a NotFound naming pods.
		notFound bool
	}{{
		name: "Lister List",
		read: func() ([]runtime.Object, error) { return objects(lister.List(labels.Everything())) },
		want: []string{"team-a", "team-a/db-0", "team-a/web-0", "team-b", "team-b/web-0"},
	}, {
		name: "Lister Get",
		read: func() ([]runtime.Object, error) { return object(lister.Get("team-b")) },
		want: []string{"team-b"},
	}, {
		name: "NamespaceLister List",
		read: func() ([]runtime.Object, error) {
			return objects(lister.Namespace("team-b").List(labels.Everything()))
		},
		want: []string{"team-b/web-0"},
	}, {
		name:     "NamespaceLister Get of a missing object",
		read:     func() ([]runtime.Object, error) { return object(lister.Namespace("team-b").Get("db-0")) },
		notFound: true,
	}, {
		name: "shim List",
		read: func() ([]runtime.Object, error) { return shim.List(labels.SelectorFromSet(labels.Set{"app": "db"})) },
		want: []string{"team-a/db-0"},
	}, {
		name: "shim ByNamespace Get",
		read: func() ([]runtime.Object, error) {
			obj, err := shim.ByNamespace("team-a").Get("web-0")
			return []runtime.Object{obj}, err
		},
		want: []string{"team-a/web-0"},
	}, {
		name: "shim Get of a missing object",
		read: func() ([]runtime.Object, error) {
			obj, err := shim.Get("team-c")
			return []runtime.Object{obj}, err
		},
		notFound: true,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.read()
			if tc.notFound {
				if !apierrors.IsNotFound(err) {
					t.Fatalf("got error %v, want a NotFound error", err)
				}
				if diff := cmp.Diff(podsGVR.GroupResource().String(), err.(apierrors.APIStatus).Status().Details.Kind); diff != "" {
					t.Errorf("resource named in the error (-want +got):\n%s", diff)
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

func objects(objs []*metav1.PartialObjectMetadata, err error) ([]runtime.Object, error) {
	ret := make([]runtime.Object, len(objs))
	for i := range objs {
		ret[i] = objs[i]
	}
	return ret, err
}

func object(obj *metav1.PartialObjectMetadata, err error) ([]runtime.Object, error) {
	if err != nil {
		return nil, err
	}
	return []runtime.Object{obj}, nil
}

// ownLister is a Lister written outside this library, as a test double would
// be: NewRuntimeObjectShim must take it, as client-go's does.
type ownLister struct {
	objs []*metav1.PartialObjectMetadata
}

func (l ownLister) List(labels.Selector) ([]*metav1.PartialObjectMetadata, error) { return l.objs, nil }
func (l ownLister) Get(string) (*metav1.PartialObjectMetadata, error)             { return l.objs[0], nil }
func (l ownLister) Namespace(string) metadata.NamespaceLister                     { return l }

func TestRuntimeObjectShimOfOwnLister(t *testing.T) {
	objs := []*metav1.PartialObjectMetadata{
		partial("Pod", "team-a", "web-0", nil),
		partial("Pod", "team-a", "db-0", nil),
	}
	shim := metadata.NewRuntimeObjectShim(ownLister{objs: objs})
	got, err := shim.ByNamespace("any").List(labels.Everything())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"team-a/db-0", "team-a/web-0"}, keys(got)); diff != "" {
		t.Errorf("listed (-want +got):\n%s", diff)
	}
	first, err := shim.Get("x")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(runtime.Object(objs[0]), first); diff != "" {
		t.Errorf("Get (-want +got):\n%s", diff)
	}
}

// The drop-in's NamespaceLister has exactly the methods of client-go's
// (each is the other), and the generic core's is one.
var (
	_ metadatalister.NamespaceLister = metadata.NamespaceLister(nil)
	_ metadata.NamespaceLister       = metadatalister.NamespaceLister(nil)
	_ metadata.NamespaceLister       = generic.NamespaceLister[*metav1.PartialObjectMetadata](nil)
)

// TestNewByIndex reads, through New, an index value whose objects are in
// two namespaces and were added out of order: New's Lister and the
// NamespaceListers of its Namespace have the generic core's ByIndex, sorted
// by namespace, then name.
func TestNewByIndex(t *testing.T) {
	byApp := func(obj any) ([]string, error) {
		return []string{obj.(*metav1.PartialObjectMetadata).Labels["app"]}, nil
	}
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc, "app": byApp})
	for _, obj := range []*metav1.PartialObjectMetadata{
		partial("Pod", "team-b", "web-0", map[string]string{"app": "web"}),
		partial("Pod", "team-a", "web-2", map[string]string{"app": "web"}),
		partial("Pod", "team-a", "web-10", map[string]string{"app": "web"}),
		partial("Pod", "team-a", "db-0", map[string]string{"app": "db"}),
	} {
		if err := indexer.Add(obj); err != nil {
			t.Fatal(err)
		}
	}
	lister := metadata.New(indexer, podsGVR)
	indexed, ok := lister.(interface {
		ByIndex(indexName, indexedValue string) ([]*metav1.PartialObjectMetadata, error)
	})
	if !ok {
		t.Fatalf("New's Lister, a %T, has no ByIndex", lister)
	}
	namespaced := func(ns string) generic.NamespaceLister[*metav1.PartialObjectMetadata] {
		nl, ok := lister.Namespace(ns).(generic.NamespaceLister[*metav1.PartialObjectMetadata])
		if !ok {
			t.Fatalf("New's Namespace(%q) is a %T, not a generic.NamespaceLister", ns, lister.Namespace(ns))
		}
		return nl
	}
	tests := []struct {
		name string
		read func() ([]*metav1.PartialObjectMetadata, error)
		want []string
		// wantErr: an error and no object are wanted.
		wantErr bool
	}{{
		name: "Lister ByIndex",
		read: func() ([]*metav1.PartialObjectMetadata, error) { return indexed.ByIndex("app", "web") },
		want: []string{"team-a/web-10", "team-a/web-2", "team-b/web-0"},
	}, {
		name: "NamespaceLister ByIndex",
		read: func() ([]*metav1.PartialObjectMetadata, error) { return namespaced("team-a").ByIndex("app", "web") },
		want: []string{"team-a/web-10", "team-a/web-2"},
	}, {
		name: "NamespaceLister ByIndex of a value not in the namespace",
		read: func() ([]*metav1.PartialObjectMetadata, error) { return namespaced("team-b").ByIndex("app", "db") },
		want: []string{},
	}, {
		name: "NamespaceLister ByIndex of an unknown index",
		read: func() ([]*metav1.PartialObjectMetadata, error) {
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
				for _, obj := range got {
					keys = append(keys, obj.Namespace+"/"+obj.Name)
				}
				if diff := cmp.Diff(tc.want, keys); diff != "" {
					t.Fatalf("keys, in order (-want +got):\n%s", diff)
				}
			}
		})
	}
}
