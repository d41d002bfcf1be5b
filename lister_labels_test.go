package generic_test

import (
	"errors"
	"slices"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"

	"github.com/generic-informers/generic"
)

// labelCase is an unstructured object whose metadata (or whose lack of it)
// the Lister must read exactly as (*unstructured.Unstructured).GetLabels
// does, which client-go's dynamiclister uses: a non-string, non-null label
// value drops every label; a null one reads as "".
type labelCase struct {
	name    string
	content map[string]any
}

func labelCases() []labelCase {
	withLabels := func(l any) map[string]any {
		return map[string]any{"metadata": map[string]any{"namespace": "ns", "labels": l}}
	}
	many := map[string]any{"app": "app-3"}
	for i := range 20 { // more than a Go map's small-map group of 8
		many["k"+strconv.Itoa(i)] = "v"
	}
	manyBad := map[string]any{"app": "app-3", "bad": int64(1)}
	for i := range 20 {
		manyBad["k"+strconv.Itoa(i)] = "v"
	}
	return []labelCase{
		{"nil content", nil},
		{"no metadata", map[string]any{"kind": "Pod"}},
		{"null metadata", map[string]any{"metadata": nil}},
		{"metadata a string", map[string]any{"metadata": "app=app-3"}},
		{"metadata a list", map[string]any{"metadata": []any{map[string]any{"labels": map[string]any{"app": "app-3"}}}}},
		{"metadata without labels", map[string]any{"metadata": map[string]any{"namespace": "ns"}}},
		{"null labels", withLabels(nil)},
		{"labels a string", withLabels("app=app-3")},
		{"labels a list", withLabels([]any{"app", "app-3"})},
		{"labels a map[string]string, not JSON's type", withLabels(map[string]string{"app": "app-3"})},
		{"empty labels", withLabels(map[string]any{})},
		{"labels a nil map[string]any", withLabels(map[string]any(nil))},
		{"metadata a nil map[string]any", map[string]any{"metadata": map[string]any(nil)}},
		{"app=app-3", withLabels(map[string]any{"app": "app-3"})},
		{"app=app-4", withLabels(map[string]any{"app": "app-4", "tier": "web"})},
		{"a null label reads as empty", withLabels(map[string]any{"app": nil})},
		{"a null label next to a match", withLabels(map[string]any{"app": "app-3", "tier": nil})},
		{"an empty value", withLabels(map[string]any{"app": ""})},
		{"a number", withLabels(map[string]any{"n": "7"})},
		{"an int64 label drops them all", withLabels(map[string]any{"app": "app-3", "n": int64(7)})},
		{"a float64 label drops them all", withLabels(map[string]any{"app": "app-3", "f": 1.5})},
		{"a bool label drops them all", withLabels(map[string]any{"app": "app-3", "b": true})},
		{"a map label drops them all", withLabels(map[string]any{"app": "app-3", "m": map[string]any{"x": "y"}})},
		{"a list label drops them all", withLabels(map[string]any{"app": "app-3", "l": []any{"x"}})},
		{"the matched label itself bad", withLabels(map[string]any{"app": int64(3)})},
		{"many labels", withLabels(many)},
		{"many labels, one bad", withLabels(manyBad)},
	}
}

// labelSelectors exercise every operator, including those that match an
// object without labels (so that dropping a bad map shows).
func labelSelectors(t *testing.T) []labels.Selector {
	t.Helper()
	var ret []labels.Selector
	for _, s := range []string{
		"app=app-3", "app==app-3", "app!=app-3", "app in (app-3,app-4)", "app notin (app-3)",
		"app", "!app", "!bad", "app=", "tier", "n>5", "n<5", "app=app-3,tier", "app=app-3,!tier",
	} {
		selector, err := labels.Parse(s)
		if err != nil {
			t.Fatalf("parse %q: %v", s, err)
		}
		ret = append(ret, selector)
	}
	return append(ret, labels.Everything(), labels.Nothing(),
		labels.SelectorFromSet(labels.Set{"app": "app-3"}))
}

// keyOf keys the test objects by their place in labelCases, since most have
// no usable name.
func keyOf(obj any) (string, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return cache.MetaNamespaceKeyFunc(obj)
	}
	return keyedObjects[u], nil
}

// TestListUnstructuredLabelsAsGetLabels lists unstructured objects whose
// labels are well formed, malformed or absent, with selectors of every kind,
// in all namespaces and in one, with and without a namespace index, and
// compares the objects listed with those client-go's
// cache.ListAllByNamespace lists, which matches a copy from GetLabels.
func TestListUnstructuredLabelsAsGetLabels(t *testing.T) {
	cases := labelCases()
	for _, withIndex := range []bool{true, false} {
		indexers := cache.Indexers{}
		if withIndex {
			indexers[cache.NamespaceIndex] = cache.MetaNamespaceIndexFunc
		}
		indexer := cache.NewIndexer(keyOf, indexers)
		for i, c := range cases {
			u := &unstructured.Unstructured{Object: c.content}
			if err := indexer.Add(keyed(u, strconv.Itoa(i))); err != nil {
				t.Fatal(err)
			}
		}
		lister := generic.NewLister[*unstructured.Unstructured](indexer, podsGVR.GroupResource())
		for _, selector := range labelSelectors(t) {
			for _, namespace := range []string{metav1.NamespaceAll, "ns", "other"} {
				name := "index=" + strconv.FormatBool(withIndex) + "/ns=" + namespace + "/selector=" + selector.String()
				t.Run(name, func(t *testing.T) {
					var want []string
					if err := cache.ListAllByNamespace(indexer, namespace, selector, func(obj any) {
						want = append(want, caseName(cases, obj))
					}); err != nil {
						t.Fatal(err)
					}
					var got []*unstructured.Unstructured
					var err error
					if namespace == metav1.NamespaceAll {
						got, err = lister.List(selector)
					} else {
						got, err = lister.Namespace(namespace).List(selector)
					}
					if err != nil {
						t.Fatal(err)
					}
					var gotNames []string
					for _, obj := range got {
						gotNames = append(gotNames, caseName(cases, obj))
					}
					slices.Sort(want)
					slices.Sort(gotNames)
					if diff := cmp.Diff(want, gotNames); diff != "" {
						t.Errorf("listed (-client-go +generic):\n%s", diff)
					}
				})
			}
		}
	}
}

// keyed returns u, recording its key for keyOf.
func keyed(u *unstructured.Unstructured, key string) *unstructured.Unstructured {
	keyedObjects[u] = key
	return u
}

// keyedObjects maps the test objects to their keys (an object whose
// metadata is malformed cannot carry an annotation).
var keyedObjects = map[*unstructured.Unstructured]string{}

func caseName(cases []labelCase, obj any) string {
	i, err := strconv.Atoi(keyedObjects[obj.(*unstructured.Unstructured)])
	if err != nil {
		return "?"
	}
	return cases[i].name
}

// TestListUnstructuredSelectorMatchesManyObjects lists more objects than
// the Lister reads at a time, mixed well formed and malformed, so that every
// batch boundary is crossed, and compares with client-go: with a labels map
// of each object's own, and with maps shared by many objects, as the
// unstructured decoders share equal labels maps, well formed and malformed
// ones of the same labels in turn (the Lister must not take one for the
// other when it remembers which map it last found well formed).
func TestListUnstructuredSelectorMatchesManyObjects(t *testing.T) {
	ownLabels := func(i int) map[string]any {
		l := map[string]any{"app": "app-" + strconv.Itoa(i%10)}
		if i%7 == 0 {
			l["n"] = int64(i)
		}
		if i%11 == 0 {
			l["app"] = nil
		}
		return l
	}
	// Object i has map i%19: 19 is prime to the three namespaces (i%3),
	// so that each namespace gets maps of every kind.
	var shared []map[string]any
	for i := range 6 {
		shared = append(shared, map[string]any{"app": "app-3"}, map[string]any{"app": "app-3", "n": int64(i)}, ownLabels(i))
	}
	shared = append(shared, map[string]any{"app": "app-3", "tier": "web"})
	for _, tc := range []struct {
		name     string
		labelsOf func(i int) map[string]any
	}{
		{"own maps", ownLabels},
		{"shared maps", func(i int) map[string]any { return shared[i%len(shared)] }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			testListUnstructuredManyObjects(t, tc.labelsOf)
		})
	}
}

// testListUnstructuredManyObjects lists 1,000 objects in three namespaces,
// object i labelled labelsOf(i), with every selector of labelSelectors, and
// compares with client-go.
func testListUnstructuredManyObjects(t *testing.T, labelsOf func(i int) map[string]any) {
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	for i := range 1000 {
		if err := indexer.Add(&unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{
			"namespace": "ns-" + strconv.Itoa(i%3), "name": "o-" + strconv.Itoa(i), "labels": labelsOf(i),
		}}}); err != nil {
			t.Fatal(err)
		}
	}
	lister := generic.NewLister[*unstructured.Unstructured](indexer, podsGVR.GroupResource())
	for _, selector := range labelSelectors(t) {
		for _, namespace := range []string{metav1.NamespaceAll, "ns-1"} {
			t.Run("ns="+namespace+"/selector="+selector.String(), func(t *testing.T) {
				var want []string
				if err := cache.ListAllByNamespace(indexer, namespace, selector, func(obj any) {
					key, _ := cache.MetaNamespaceKeyFunc(obj)
					want = append(want, key)
				}); err != nil {
					t.Fatal(err)
				}
				var got []*unstructured.Unstructured
				var err error
				if namespace == metav1.NamespaceAll {
					got, err = lister.List(selector)
				} else {
					got, err = lister.Namespace(namespace).List(selector)
				}
				if err != nil {
					t.Fatal(err)
				}
				var gotKeys []string
				for _, obj := range got {
					key, _ := cache.MetaNamespaceKeyFunc(obj)
					gotKeys = append(gotKeys, key)
				}
				slices.Sort(want)
				slices.Sort(gotKeys)
				if diff := cmp.Diff(want, gotKeys); diff != "" {
					t.Errorf("listed (-client-go +generic):\n%s", diff)
				}
			})
		}
	}
}

// TestListMixedTypesMatchesLabelsOfEach lists an indexer holding typed and
// unstructured objects (a wrong cache) through both Listers: each object's
// labels are matched, whatever its type, and the others are reported.
func TestListMixedTypesMatchesLabelsOfEach(t *testing.T) {
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	objs := []any{
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "typed-match", Labels: map[string]string{"app": "a"}}},
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "typed-other", Labels: map[string]string{"app": "b"}}},
		&unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"namespace": "ns", "name": "u-match", "labels": map[string]any{"app": "a"}}}},
		&unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"namespace": "ns", "name": "u-other", "labels": map[string]any{"app": "b"}}}},
	}
	for _, obj := range objs {
		if err := indexer.Add(obj); err != nil {
			t.Fatal(err)
		}
	}
	selector := labels.SelectorFromSet(labels.Set{"app": "a"})
	tests := []struct {
		name string
		list func() ([]string, error)
		want []string
	}{{
		name: "typed Lister, all namespaces",
		list: func() ([]string, error) {
			return names(generic.NewLister[*corev1.Pod](indexer, podsGVR.GroupResource()).List(selector))
		},
		want: []string{"typed-match"},
	}, {
		name: "typed Lister, one namespace",
		list: func() ([]string, error) {
			return names(generic.NewLister[*corev1.Pod](indexer, podsGVR.GroupResource()).Namespace("ns").List(selector))
		},
		want: []string{"typed-match"},
	}, {
		name: "unstructured Lister, all namespaces",
		list: func() ([]string, error) {
			return names(generic.NewLister[*unstructured.Unstructured](indexer, podsGVR.GroupResource()).List(selector))
		},
		want: []string{"u-match"},
	}, {
		name: "unstructured Lister, one namespace",
		list: func() ([]string, error) {
			return names(generic.NewLister[*unstructured.Unstructured](indexer, podsGVR.GroupResource()).Namespace("ns").List(selector))
		},
		want: []string{"u-match"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.list()
			if !errors.Is(err, generic.ErrUnexpectedType) {
				t.Errorf("error %v, want one wrapping ErrUnexpectedType", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("listed (-want +got):\n%s", diff)
			}
		})
	}
}

func names[T metav1.Object](objs []T, err error) ([]string, error) {
	var ret []string
	for _, obj := range objs {
		ret = append(ret, obj.GetName())
	}
	slices.Sort(ret)
	return ret, err
}

// TestListObjectWithoutMetadataIsAnError: an object in the cache that has no
// object metadata at all is an error, never a panic: meta.Accessor's, as in
// client-go, when labels are read.
func TestListObjectWithoutMetadataIsAnError(t *testing.T) {
	indexer := cache.NewIndexer(func(any) (string, error) { return "k", nil }, cache.Indexers{})
	if err := indexer.Add("not an object"); err != nil {
		t.Fatal(err)
	}
	lister := generic.NewLister[*unstructured.Unstructured](indexer, podsGVR.GroupResource())
	tests := []struct {
		name     string
		selector labels.Selector
		wantErr  bool
	}{
		{"a selector reads labels: meta.Accessor's error", labels.SelectorFromSet(labels.Set{"app": "a"}), true},
		{"everything reads no labels, but not a T: ErrUnexpectedType", labels.Everything(), true},
		{"nothing reads nothing", labels.Nothing(), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := lister.List(tt.selector)
			wantErr := errors.New("an error")
			if !tt.wantErr {
				wantErr = nil
			}
			if diff := cmp.Diff(wantErr != nil, err != nil); diff != "" {
				t.Errorf("error %v (-want +got):\n%s", err, diff)
			}
		})
	}
}
