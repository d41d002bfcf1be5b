package generictest

import (
	"slices"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/generic-informers/generic"
)

// WaitFor waits until the informer's cache holds exactly want (compared
// with cmp, with opts, both sorted by namespace/name): a state a controller
// under test should reach. It re-checks at every change of the cache, with
// no polling, and fails the test at its deadline with the cmp.Diff of want
// and the cache.
func WaitFor[T generic.Object](informer *Informer[T], want []T, opts ...cmp.Option) {
	informer.fake.t.Helper()
	want = sortedByKey(want)
	WaitForState(informer, want, func(objs []T) []T { return objs }, opts...)
}

// WaitForState waits until project, applied to the informer's cache (sorted
// by namespace/name), equals want: a view of the cache that leaves out what
// the test does not care about. It fails as WaitFor does.
//
// Both return once the informer's handlers, too, have seen the state they
// found (or a later one): handlers are told of a change after the cache
// holds it, and a test that reads a Recorder next must find it there.
func WaitForState[T generic.Object, S any](informer *Informer[T], want S, project func([]T) S, opts ...cmp.Option) {
	f := informer.fake
	f.t.Helper()
	ctx, cancel, bound := f.deadline()
	defer cancel()
	for {
		changed := f.seen.wait()
		since := f.seen.lastStamp()
		objs, err := informer.Lister().List(labels.Everything())
		if err != nil {
			f.t.Fatalf("generictest: list %s: %v", informer.GroupVersionResource(), err)
		}
		diff := cmp.Diff(want, project(sortedByKey(objs)), opts...)
		if diff == "" {
			f.settleWithin(ctx, bound, "the state of the cache of "+informer.GroupVersionResource().String(),
				f.seen.expectCache(informer.Informer(), informer.GroupVersionResource(), cachedStates(objs), since))
			return
		}
		select {
		case <-changed:
		case <-ctx.Done():
			f.t.Fatalf("generictest: the cache of %s did not reach the state wanted within %v (-want +got):\n%s",
				informer.GroupVersionResource(), bound, diff)
			return
		}
	}
}

// cachedStates returns what the seen log needs of objs: key, labels and
// resourceVersion.
func cachedStates[T generic.Object](objs []T) []*unstructured.Unstructured {
	states := make([]*unstructured.Unstructured, len(objs))
	for i, obj := range objs {
		u := &unstructured.Unstructured{}
		u.SetNamespace(obj.GetNamespace())
		u.SetName(obj.GetName())
		u.SetLabels(obj.GetLabels())
		u.SetResourceVersion(obj.GetResourceVersion())
		states[i] = u
	}
	return states
}

func sortedByKey[T generic.Object](objs []T) []T {
	return generic.SortByNamespaceName(slices.Clone(objs))
}
