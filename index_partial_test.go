package generic_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/cache"

	"github.com/generic-informers/generic"
)

// byNodeFailingOn is a typed "node" index function that fails on the Pods
// of node failing.
func byNodeFailingOn(failing string) cache.TypedIndexFunc[*corev1.Pod] {
	return func(pod *corev1.Pod) ([]string, error) {
		if pod.Spec.NodeName == failing {
			return nil, fmt.Errorf("%s is not indexed", failing)
		}
		return []string{pod.Spec.NodeName}, nil
	}
}

// indexAnswer is what a read of an index answered: the keys of the objects
// it returned, sorted, the Keys of its *PartialIndexError (nil without
// one), and any other error.
type indexAnswer struct {
	Keys    []string
	Partial []string
	Err     string
}

func answerOf(objs []any, err error) indexAnswer {
	keys := make([]string, 0, len(objs))
	for _, obj := range objs {
		m, merr := meta.Accessor(obj)
		if merr != nil {
			return indexAnswer{Err: merr.Error()}
		}
		keys = append(keys, cache.MetaObjectToName(m).String())
	}
	return answerOfKeys(keys, err)
}

func answerOfKeys(keys []string, err error) indexAnswer {
	a := indexAnswer{Keys: slices.Sorted(slices.Values(keys))}
	var partial *generic.PartialIndexError
	switch {
	case errors.As(err, &partial):
		a.Partial = partial.Keys
	case err != nil:
		a.Err = err.Error()
	}
	return a
}

func anySlice[T any](objs []T) []any {
	out := make([]any, len(objs))
	for i, obj := range objs {
		out[i] = obj
	}
	return out
}

// inNamespace returns the keys of namespace among keys, nil if none.
func inNamespace(namespace string, keys []string) []string {
	var in []string
	for _, key := range keys {
		if ns, _, _ := cache.SplitMetaNamespaceKey(key); ns == namespace {
			in = append(in, key)
		}
	}
	return in
}

// TestByIndexSaysWhenPartial: an index function that fails on some objects
// leaves them out of the index, and every read of that index says so with a
// *PartialIndexError naming them, beside the objects it found; a
// NamespaceLister names only those of its namespace. An object leaves the
// error when its function succeeds on a later state of it, or when it is
// deleted. With both stores. Before, every read returned the objects found
// and no error: "node-1 runs db-0 and web-0, and nothing else" when
// web-1's place was unknown.
func TestByIndexSaysWhenPartial(t *testing.T) {
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
			pods := map[string]*corev1.Pod{}
			for i := range first.(*corev1.PodList).Items {
				pod := &first.(*corev1.PodList).Items[i]
				pods[pod.Namespace+"/"+pod.Name] = pod.DeepCopy()
			}
			lw := newScriptedListerWatcher(first)
			informer := newInformer[*corev1.Pod](lw, podsGVR, nil,
				append(store.opts, generic.WithErrorHandler(func(context.Context, error) {}))...)
			if err := informer.AddIndexers(cache.TypedIndexers[*corev1.Pod]{"node": byNodeFailingOn("node-2")}); err != nil {
				t.Fatal(err)
			}
			defer runSynced(t, informer)()
			w := lw.nextWatch(t)

			read := func() map[string]indexAnswer {
				lister, indexer := informer.Lister(), informer.Informer().GetIndexer()
				answers := map[string]indexAnswer{}
				objs, err := lister.ByIndex("node", "node-1")
				answers["Lister.ByIndex"] = answerOf(anySlice(objs), err)
				for _, ns := range []string{"team-a", "team-b"} {
					objs, err := lister.Namespace(ns).ByIndex("node", "node-1")
					answers[ns+" NamespaceLister.ByIndex"] = answerOf(anySlice(objs), err)
				}
				untyped, err := indexer.ByIndex("node", "node-1")
				answers["GetIndexer().ByIndex"] = answerOf(untyped, err)
				keys, err := indexer.IndexKeys("node", "node-1")
				answers["GetIndexer().IndexKeys"] = answerOfKeys(keys, err)
				untyped, err = indexer.Index("node", pods["team-a/db-0"])
				answers["GetIndexer().Index"] = answerOf(untyped, err)
				answers["GetIndexer().ListIndexFuncValues"] = indexAnswer{Keys: slices.Sorted(slices.Values(indexer.ListIndexFuncValues("node")))}
				return answers
			}
			want := func(node1, failing, values []string) map[string]indexAnswer {
				return map[string]indexAnswer{
					"Lister.ByIndex":                   {Keys: node1, Partial: failing},
					"team-a NamespaceLister.ByIndex":   {Keys: inNamespace("team-a", node1), Partial: inNamespace("team-a", failing)},
					"team-b NamespaceLister.ByIndex":   {Keys: inNamespace("team-b", node1), Partial: inNamespace("team-b", failing)},
					"GetIndexer().ByIndex":             {Keys: node1, Partial: failing},
					"GetIndexer().IndexKeys":           {Keys: node1, Partial: failing},
					"GetIndexer().Index":               {Keys: node1, Partial: failing},
					"GetIndexer().ListIndexFuncValues": {Keys: values},
				}
			}
			moved := pods["team-a/web-1"].DeepCopy()
			moved.Spec.NodeName, moved.ResourceVersion = "node-1", "6"
			deleted := pods["team-b/web-0"].DeepCopy()
			deleted.ResourceVersion = "7"

			steps := []struct {
				name  string
				event func()
				want  map[string]indexAnswer
			}{
				{
					name: "node-2's Pods fail",
					want: want([]string{"team-a/db-0", "team-a/web-0"}, []string{"team-a/web-1", "team-b/web-0"}, []string{"node-1"}),
				},
				{
					name:  "web-1 moves to node-1: indexed",
					event: func() { w.Modify(moved) },
					want:  want([]string{"team-a/db-0", "team-a/web-0", "team-a/web-1"}, []string{"team-b/web-0"}, []string{"node-1"}),
				},
				{
					name:  "team-b/web-0 deleted: the answer is whole",
					event: func() { w.Delete(deleted) },
					want:  want([]string{"team-a/db-0", "team-a/web-0", "team-a/web-1"}, nil, []string{"node-1"}),
				},
			}
			for _, step := range steps {
				if step.event != nil {
					step.event()
				}
				var got map[string]indexAnswer
				// Until the cache has applied the event, or boundedWait.
				_ = wait.PollUntilContextTimeout(context.Background(), 10*time.Millisecond, boundedWait, true,
					func(context.Context) (bool, error) { got = read(); return cmp.Equal(step.want, got), nil })
				if diff := cmp.Diff(step.want, got); diff != "" {
					t.Errorf("%s: answers (-want +got):\n%s", step.name, diff)
				}
			}
		})
	}
}

// TestIndexOfAFailingObject: Informer().GetIndexer().Index of an object its
// index function fails on returns that function's error as an *IndexError,
// and no object. client-go's store would panic; a guard that only
// swallowed the error would answer the objects it failed on before.
func TestIndexOfAFailingObject(t *testing.T) {
	first, _ := podLists(t, true)
	informer := newInformer[*corev1.Pod](newScriptedListerWatcher(first), podsGVR, nil,
		generic.WithErrorHandler(func(context.Context, error) {}))
	if err := informer.AddIndexers(cache.TypedIndexers[*corev1.Pod]{"node": byNodeFailingOn("node-2")}); err != nil {
		t.Fatal(err)
	}
	defer runSynced(t, informer)()
	onNode2 := first.(*corev1.PodList).Items[1].DeepCopy()
	tests := []struct {
		name      string
		index     func() ([]any, error)
		wantIndex string
	}{
		{name: "Index", index: func() ([]any, error) { return informer.Informer().GetIndexer().Index("node", onNode2) }, wantIndex: "node"},
		{name: "GetIndexers' function", index: func() ([]any, error) {
			_, err := informer.Informer().GetIndexer().GetIndexers()["node"](onNode2)
			return nil, err
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			objs, err := tc.index()
			if len(objs) != 0 {
				t.Errorf("got %d objects, want none", len(objs))
			}
			var indexErr *generic.IndexError
			switch {
			case err == nil:
				t.Fatal("no error")
			case tc.wantIndex != "" && (!errors.As(err, &indexErr) || indexErr.Index != tc.wantIndex || indexErr.Key != "team-a/web-1"):
				t.Errorf("error %v, want an *IndexError of index %s and team-a/web-1", err, tc.wantIndex)
			}
		})
	}
}

// TestInformerAddIndexersIsGuarded: index functions added the client-go
// way, Informer().AddIndexers and Informer().GetIndexer().AddIndexers, are
// guarded as Informer.AddIndexers' are: an error is reported and the
// answer is partial. Before, they reached client-go's store as they were,
// which panics on the first error.
func TestInformerAddIndexersIsGuarded(t *testing.T) {
	failing := cache.TypedIndexerFuncToIndexerFunc(byNodeFailingOn("node-2"))
	tests := []struct {
		name string
		add  func(generic.Informer[*corev1.Pod]) error
	}{
		{name: "Informer().AddIndexers", add: func(i generic.Informer[*corev1.Pod]) error {
			return i.Informer().AddIndexers(cache.Indexers{"node": failing})
		}},
		{name: "Informer().GetIndexer().AddIndexers", add: func(i generic.Informer[*corev1.Pod]) error {
			return i.Informer().GetIndexer().AddIndexers(cache.Indexers{"node": failing})
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			first, _ := podLists(t, true)
			errs := make(errorSink, 100)
			informer := newInformer[*corev1.Pod](newScriptedListerWatcher(first), podsGVR, nil, generic.WithErrorHandler(errs.handle))
			defer runSynced(t, informer)()
			if err := tc.add(informer); err != nil {
				t.Fatal(err)
			}
			var indexErr *generic.IndexError
			if err := errs.next(t); !errors.As(err, &indexErr) || indexErr.Index != "node" {
				t.Errorf("reported %v, want an *IndexError of index node", err)
			}
			objs, err := informer.Lister().ByIndex("node", "node-1")
			want := indexAnswer{Keys: []string{"team-a/db-0", "team-a/web-0"}, Partial: []string{"team-a/web-1", "team-b/web-0"}}
			if diff := cmp.Diff(want, answerOf(anySlice(objs), err)); diff != "" {
				t.Errorf("ByIndex (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPartialIndexErrorMessage: the message names the index and the first
// objects it leaves out.
func TestPartialIndexErrorMessage(t *testing.T) {
	tests := []struct {
		name string
		keys []string
		want string
	}{
		{name: "one", keys: []string{"a/x"}, want: `index "node" is partial: its function fails on 1 object ("a/x"), which the index holds under no value`},
		{name: "many", keys: []string{"a/1", "a/2", "a/3", "a/4", "a/5", "a/6", "a/7"},
			want: `index "node" is partial: its function fails on 7 objects ("a/1", "a/2", "a/3", "a/4", "a/5" and 2 more), which the index holds under no value`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := &generic.PartialIndexError{Index: "node", Keys: tc.keys}
			if diff := cmp.Diff(tc.want, err.Error()); diff != "" {
				t.Errorf("message (-want +got):\n%s", diff)
			}
		})
	}
}
