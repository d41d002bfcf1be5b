package generic_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"

	"github.com/generic-informers/generic"
)

// TestNewInformerHonoursOrRefusesEachOption: NewInformer honours the
// selectors and the list-options tweak (every request gets them, and the
// cache holds what they select), and refuses WithNamespace, which its
// ListerWatcher decides, with an error naming it; it never drops one.
func TestNewInformerHonoursOrRefusesEachOption(t *testing.T) {
	tests := []struct {
		name         string
		opts         []generic.InformerOption
		wantErr      string
		wantSelector string
		wantKeys     []string
	}{
		{name: "no options", wantKeys: []string{"team-a/flags", "team-a/settings", "team-b/settings"}},
		{name: "a label selector", opts: []generic.InformerOption{generic.WithLabelSelector("app=web")},
			wantSelector: "app=web", wantKeys: []string{"team-a/settings", "team-b/settings"}},
		{name: "a tweak's selector", opts: []generic.InformerOption{generic.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = "app=web" })},
			wantSelector: "app=web", wantKeys: []string{"team-a/settings", "team-b/settings"}},
		{name: "a namespace", opts: []generic.InformerOption{generic.WithNamespace("team-a")}, wantErr: `WithNamespace("team-a")`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			client := newDynamicClient(t, "testdata/configmaps.yaml")
			var mu sync.Mutex
			var selectors []string
			client.PrependReactor("list", "configmaps", func(action clienttesting.Action) (bool, runtime.Object, error) {
				mu.Lock()
				defer mu.Unlock()
				selectors = append(selectors, action.(clienttesting.ListAction).GetListRestrictions().Labels.String())
				return false, nil, nil
			})
			lw := generic.DynamicSource(client)(configMapsGVR, metav1.NamespaceAll, nil)
			informer, err := generic.NewInformer[*unstructured.Unstructured](lw, configMapsGVR, nil, tc.opts...)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("NewInformer = %v, want an error naming %s", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := testContext(t)
			defer cancel()
			done := make(chan struct{})
			go func() { defer close(done); informer.Run(ctx) }()
			defer func() { cancel(); <-done }()
			if !cache.WaitForCacheSync(ctx.Done(), informer.HasSynced) {
				t.Fatal("the informer did not sync")
			}
			objs, err := informer.Lister().List(labels.Everything())
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantKeys, keysOf(t, objs)); diff != "" {
				t.Errorf("cached (-want +got):\n%s", diff)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(selectors) == 0 || selectors[0] != tc.wantSelector {
				t.Errorf("label selectors of the lists = %q, want %q first", selectors, tc.wantSelector)
			}
		})
	}
}
