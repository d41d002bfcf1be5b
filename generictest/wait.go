package generictest

import (
	"slices"
	"strings"

	"github.com/google/go-cmp/cmp"
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
func WaitForState[T generic.Object, S any](informer *Informer[T], want S, project func([]T) S, opts ...cmp.Option) {
	f := informer.fake
	f.t.Helper()
	ctx, cancel := f.deadline()
	defer cancel()
	for {
		changed := f.seen.wait()
		objs, err := informer.Lister().List(labels.Everything())
		if err != nil {
			f.t.Fatalf("generictest: list %s: %v", informer.GroupVersionResource(), err)
		}
		diff := cmp.Diff(want, project(sortedByKey(objs)), opts...)
		if diff == "" {
			return
		}
		select {
		case <-changed:
		case <-ctx.Done():
			f.t.Fatalf("generictest: the cache of %s did not reach the state wanted (-want +got):\n%s", informer.GroupVersionResource(), diff)
		}
	}
}

func sortedByKey[T generic.Object](objs []T) []T {
	sorted := slices.Clone(objs)
	slices.SortFunc(sorted, func(a, b T) int { return strings.Compare(keyOf(a), keyOf(b)) })
	return sorted
}
