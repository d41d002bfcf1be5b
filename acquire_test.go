package generic_test

import (
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	clienttesting "k8s.io/client-go/testing"

	"github.com/generic-informers/generic"
)

// TestAcquireWithOwnSelection: an informer's own Options override the
// factory's, as controller-runtime's ByObject; the namespace and selectors
// name the informer, so the same GVR with another selection has a cache of
// its own, and the same selection shares one.
func TestAcquireWithOwnSelection(t *testing.T) {
	client := newDynamicClient(t, "testdata/configmaps.yaml")
	factory := newFactory[*unstructured.Unstructured](generic.DynamicSource(client), nil, generic.WithNamespace("team-a"))
	defer factory.Shutdown()
	ctx, cancel := testContext(t)
	defer cancel()

	tests := []struct {
		name     string
		opts     []generic.InformerOption
		wantKeys []string
	}{
		{name: "the factory's selection", wantKeys: []string{"team-a/flags", "team-a/settings"}},
		{name: "a label selector", opts: []generic.InformerOption{generic.WithLabelSelector("app=web")}, wantKeys: []string{"team-a/settings"}},
		{name: "another namespace", opts: []generic.InformerOption{generic.WithNamespace("team-b")}, wantKeys: []string{"team-b/settings"}},
		{name: "all namespaces and a selector", opts: []generic.InformerOption{generic.WithNamespace(""), generic.WithLabelSelector("app=web")},
			wantKeys: []string{"team-a/settings", "team-b/settings"}},
		// client-go's fake client ignores field selectors: the informer is
		// one of its own, and sends it (checked below), but caches all.
		{name: "a field selector", opts: []generic.InformerOption{generic.WithFieldSelector("metadata.name=flags")}, wantKeys: []string{"team-a/flags", "team-a/settings"}},
	}
	var fieldSelectors sync.Map
	client.PrependReactor("list", "configmaps", func(action clienttesting.Action) (bool, runtime.Object, error) {
		fieldSelectors.Store(action.(clienttesting.ListAction).GetListRestrictions().Fields.String(), true)
		return false, nil, nil
	})
	handles := make([]generic.Handle[*unstructured.Unstructured], len(tests))
	for i, tc := range tests {
		handles[i] = acquire(factory, configMapsGVR, tc.opts...)
		if again := acquire(factory, configMapsGVR, tc.opts...); again.Informer() != handles[i].Informer() {
			t.Errorf("%s: the same selection got another informer", tc.name)
		}
	}
	factory.Start(ctx)
	if err := factory.WaitForCacheSync(ctx).AsError(); err != nil {
		t.Fatal(err)
	}
	if _, sent := fieldSelectors.Load("metadata.name=flags"); !sent {
		t.Error("the field selector was not sent")
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for j := range i {
				if handles[j].Informer() == handles[i].Informer() {
					t.Errorf("shares the informer of %q", tests[j].name)
				}
			}
			objs, err := handles[i].Lister().List(labels.Everything())
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantKeys, keysOf(t, objs)); diff != "" {
				t.Errorf("cached (-want +got):\n%s", diff)
			}
		})
	}
}
