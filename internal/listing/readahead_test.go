package listing

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"
)

// answer is what a labels.Labels answers for one key.
type answer struct {
	Has    bool
	Get    string
	Lookup string
	Found  bool
}

func answerOf(l labels.Labels, key string) answer {
	value, found := l.Lookup(key)
	return answer{Has: l.Has(key), Get: l.Get(key), Lookup: value, Found: found}
}

// TestAheadLabelsAnswersAsTheMap reads ahead the selector's first key in
// labels maps of every shape a value can take (a string, an empty string,
// null, a number, a map, absent; a nil map) and asks the view the match
// gives the selector for that key and others: it answers every key exactly
// as the labels map read in place (unstructuredLabels) does.
func TestAheadLabelsAnswersAsTheMap(t *testing.T) {
	tests := []struct {
		name     string
		selector string
		labels   map[string]any
	}{
		{name: "a string", selector: "app=web", labels: map[string]any{"app": "web", "tier": "db"}},
		{name: "an empty string", selector: "app", labels: map[string]any{"app": ""}},
		{name: "null", selector: "app=", labels: map[string]any{"app": nil}},
		{name: "a number", selector: "app>1", labels: map[string]any{"app": int64(2)}},
		{name: "a map", selector: "app!=web", labels: map[string]any{"app": map[string]any{"a": "b"}}},
		{name: "absent", selector: "!app", labels: map[string]any{"tier": "db"}},
		{name: "no labels map", selector: "app in (web)", labels: nil},
		{name: "the first of two keys, in key order", selector: "tier=db,app=web", labels: map[string]any{"app": "web", "tier": "db"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			selector, err := labels.Parse(tc.selector)
			if err != nil {
				t.Fatal(err)
			}
			m := newMatcher(selector)
			defer m.release()
			var ahead [1]aheadValue
			m.readAhead([]unstructuredLabels{tc.labels}, ahead[:])
			view := &aheadLabels{labels: tc.labels, key: m.view.key, ahead: ahead[0]}
			for _, key := range []string{"app", "tier", "absent"} {
				if diff := cmp.Diff(answerOf(unstructuredLabels(tc.labels), key), answerOf(view, key)); diff != "" {
					t.Errorf("key %q (-in place +read ahead):\n%s", key, diff)
				}
			}
		})
	}
}

// TestMatchReadsTheFirstKeyFromAhead gives the match a value of the
// selector's first key other than the labels map's (which no cached object
// can have: it does not change between the passes of one batch) to show
// which one it reads: the value read ahead, not the map again; the keys
// after the first from the map.
func TestMatchReadsTheFirstKeyFromAhead(t *testing.T) {
	tests := []struct {
		name     string
		selector string
		labels   map[string]any
		ahead    aheadValue
		want     bool
	}{
		{name: "the first key as read ahead", selector: "app=web", labels: map[string]any{"app": "db"}, ahead: aheadValue{value: "web", ok: true}, want: true},
		{name: "absent as read ahead", selector: "app=web", labels: map[string]any{"app": "web"}, ahead: aheadValue{}, want: false},
		{name: "the second key from the map", selector: "app=web,tier=db", labels: map[string]any{"app": "db", "tier": "db"}, ahead: aheadValue{value: "web", ok: true}, want: true},
		{name: "the second key absent from the map", selector: "app=web,tier=db", labels: map[string]any{"app": "web"}, ahead: aheadValue{value: "web", ok: true}, want: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			selector, err := labels.Parse(tc.selector)
			if err != nil {
				t.Fatal(err)
			}
			m := newMatcher(selector)
			defer m.release()
			u := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"labels": tc.labels}}}
			got, err := m.matches(u, tc.labels, tc.ahead)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("matches (-want +got):\n%s", diff)
			}
		})
	}
}

// TestUnstructuredListAllocatesAsATypedList lists objects with a label
// selector from a cache.Indexer of *unstructured.Unstructured (Unstructured)
// and from one of the same objects typed (client-go's
// cache.ListAllByNamespace), across namespaces and in one: the
// unstructured List allocates no more than the typed one (the indexer's
// slice of items), whatever it reads ahead.
func TestUnstructuredListAllocatesAsATypedList(t *testing.T) {
	indexers := cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}
	typed := cache.NewIndexer(cache.MetaNamespaceKeyFunc, indexers)
	untyped := cache.NewIndexer(cache.MetaNamespaceKeyFunc, indexers)
	for i := range 200 {
		meta := metav1.ObjectMeta{
			Namespace: []string{"a", "b"}[i%2], Name: "o" + string(rune('a'+i%26)) + string(rune('a'+i/26)),
			Labels: map[string]string{"app": []string{"web", "db", "cache"}[i%3]},
		}
		if err := typed.Add(&metav1.PartialObjectMetadata{ObjectMeta: meta}); err != nil {
			t.Fatal(err)
		}
		u := &unstructured.Unstructured{Object: map[string]any{}}
		u.SetNamespace(meta.Namespace)
		u.SetName(meta.Name)
		u.SetLabels(meta.Labels)
		if err := untyped.Add(u); err != nil {
			t.Fatal(err)
		}
	}
	selector := labels.SelectorFromSet(labels.Set{"app": "web"})
	tests := []struct {
		name      string
		namespace string
	}{
		{name: "across namespaces", namespace: metav1.NamespaceAll},
		{name: "in one namespace", namespace: "a"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			found := make([]any, 0, 200)
			appendFn := func(obj any) { found = append(found, obj) }
			want := testing.AllocsPerRun(100, func() {
				found = found[:0]
				if err := cache.ListAllByNamespace(typed, tc.namespace, selector, appendFn); err != nil {
					t.Fatal(err)
				}
			})
			typedFound := len(found)
			got := testing.AllocsPerRun(100, func() {
				found = found[:0]
				if err := Unstructured(untyped, tc.namespace, selector, appendFn); err != nil {
					t.Fatal(err)
				}
			})
			if diff := cmp.Diff(typedFound, len(found)); diff != "" {
				t.Fatalf("objects listed (-typed +unstructured):\n%s", diff)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("allocations (-typed +unstructured):\n%s", diff)
			}
		})
	}
}
