package generic_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/generic-informers/generic"
)

// tweakSelecting is a list-options tweak that sets the label selector,
// as ported client-go code sets selectors.
func tweakSelecting(selector string) generic.InformerOption {
	return generic.WithTweakListOptions(func(options *metav1.ListOptions) { options.LabelSelector = selector })
}

// TestTweakSelectorsSelect: the selectors a list-options tweak sets,
// factory-wide or on one informer, select what the informer caches,
// combined (AND) with the options' own. They were overwritten by the
// options' (empty) selectors, and every object was cached.
func TestTweakSelectorsSelect(t *testing.T) {
	tests := []struct {
		name          string
		factoryOpts   []generic.InformerOption
		informerOpts  []generic.InformerOption
		wantKeys      []string
		wantSameAsOpt []generic.InformerOption // an informer that shares the cache
	}{
		{
			name:     "no tweak",
			wantKeys: []string{"team-a/flags", "team-a/settings", "team-b/settings"},
		},
		{
			name:          "a tweak's label selector, on the informer",
			informerOpts:  []generic.InformerOption{tweakSelecting("app=web")},
			wantKeys:      []string{"team-a/settings", "team-b/settings"},
			wantSameAsOpt: []generic.InformerOption{generic.WithLabelSelector("app=web")},
		},
		{
			name:         "a tweak's label selector, factory-wide",
			factoryOpts:  []generic.InformerOption{tweakSelecting("app=web")},
			informerOpts: []generic.InformerOption{generic.WithNamespace("team-a")},
			wantKeys:     []string{"team-a/settings"},
		},
		{
			name:          "a tweak's and an option's, on other labels, both",
			informerOpts:  []generic.InformerOption{generic.WithLabelSelector("!beta"), tweakSelecting("app=web")},
			wantKeys:      []string{"team-a/settings", "team-b/settings"},
			wantSameAsOpt: []generic.InformerOption{generic.WithLabelSelector("app=web,!beta")},
		},
		{
			name:          "a tweak's and an option's, the same",
			informerOpts:  []generic.InformerOption{generic.WithLabelSelector("app=web"), tweakSelecting("app=web")},
			wantKeys:      []string{"team-a/settings", "team-b/settings"},
			wantSameAsOpt: []generic.InformerOption{generic.WithLabelSelector("app=web")},
		},
		{
			name:         "a tweak that selects nothing cached",
			informerOpts: []generic.InformerOption{tweakSelecting("app=db")},
			wantKeys:     []string{},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			factory := newFactory[*unstructured.Unstructured](generic.DynamicSource(newDynamicClient(t, "testdata/configmaps.yaml")), nil, asFactoryOptions(tc.factoryOpts)...)
			defer factory.Shutdown()
			ctx, cancel := testContext(t)
			defer cancel()
			handle := acquire(factory, configMapsGVR, tc.informerOpts...)
			if tc.wantSameAsOpt != nil {
				if same := acquire(factory, configMapsGVR, tc.wantSameAsOpt...); same.Informer() != handle.Informer() {
					t.Error("the same selection, set by the tweak and by options, got two informers")
				}
			}
			if unselected := acquire(factory, configMapsGVR); tc.informerOpts != nil && unselected.Informer() == handle.Informer() {
				t.Error("the tweak's selection shares the informer of no selection")
			}
			factory.Start(ctx)
			if err := factory.WaitForCacheSync(ctx).AsError(); err != nil {
				t.Fatal(err)
			}
			objs, err := handle.Lister().List(labels.Everything())
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantKeys, keysOf(t, objs)); diff != "" {
				t.Errorf("cached (-want +got):\n%s", diff)
			}
		})
	}
}

// TestTweakSelectorsConflict: a label or field that a tweak and an option
// constrain differently is an error naming both selectors, where the
// option is given (the factory or Acquire), and nothing is made.
func TestTweakSelectorsConflict(t *testing.T) {
	fieldTweak := generic.WithTweakListOptions(func(options *metav1.ListOptions) { options.FieldSelector = "metadata.name=b" })
	tests := []struct {
		name         string
		factoryOpts  []generic.InformerOption
		informerOpts []generic.InformerOption
		wantInError  []string
	}{
		{
			name:        "labels, factory-wide",
			factoryOpts: []generic.InformerOption{generic.WithLabelSelector("app=web"), tweakSelecting("app=db")},
			wantInError: []string{`WithLabelSelector("app=web")`, `"app=db"`, `label "app"`},
		},
		{
			name:         "labels, the factory's option and the informer's tweak",
			factoryOpts:  []generic.InformerOption{generic.WithLabelSelector("app=web,tier=a")},
			informerOpts: []generic.InformerOption{tweakSelecting("tier!=a")},
			wantInError:  []string{`WithLabelSelector("app=web,tier=a")`, `"tier!=a"`, `label "tier"`},
		},
		{
			name:         "fields",
			informerOpts: []generic.InformerOption{generic.WithFieldSelector("metadata.name=a"), fieldTweak},
			wantInError:  []string{`WithFieldSelector("metadata.name=a")`, `"metadata.name=b"`, `field "metadata.name"`},
		},
		{
			name:         "a tweak's selector that does not parse",
			informerOpts: []generic.InformerOption{tweakSelecting("app in (")},
			wantInError:  []string{`"app in ("`, "WithTweakListOptions"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			factory, err := generic.NewFactory[*unstructured.Unstructured](generic.DynamicSource(newDynamicClient(t)), nil, asFactoryOptions(tc.factoryOpts)...)
			if err == nil {
				defer factory.Shutdown()
				_, err = factory.Acquire(configMapsGVR, tc.informerOpts...)
			}
			if err == nil {
				t.Fatal("no error")
			}
			var missing []string
			for _, want := range tc.wantInError {
				if !strings.Contains(err.Error(), want) {
					missing = append(missing, want)
				}
			}
			if diff := cmp.Diff([]string(nil), missing); diff != "" {
				t.Errorf("error %q lacks (-want +got):\n%s", err, diff)
			}
		})
	}
}
