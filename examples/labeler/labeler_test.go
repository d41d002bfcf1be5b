package labeler_test

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/controller"
	"github.com/generic-informers/generic/examples/labeler"
	"github.com/generic-informers/generic/generictest"
	"github.com/generic-informers/generic/internal/widget"
	"github.com/generic-informers/generic/typed"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func fixtures(names ...string) []string {
	paths := []string{filepath.Join("..", "..", "testdata", "labeler", "configmaps.yaml")}
	for _, name := range names {
		paths = append(paths, filepath.Join("..", "..", "testdata", "labeler", name+".yaml"))
	}
	return paths
}

// widgetLabels is the part of the ConfigMaps the controller owns: for each
// ConfigMap with widget labels, the names of those Widgets.
func widgetLabels(configMaps []*corev1.ConfigMap) map[string][]string {
	got := map[string][]string{}
	for _, cm := range configMaps {
		for k := range cm.Labels {
			if name, ok := strings.CutPrefix(k, labeler.LabelPrefix); ok {
				got[cm.Namespace+"/"+cm.Name] = append(got[cm.Namespace+"/"+cm.Name], name)
			}
		}
	}
	for _, names := range got {
		slices.Sort(names)
	}
	return got
}

func gear(configMapName string) *widget.Widget {
	return &widget.Widget{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "gear"},
		Spec:       widget.Spec{Size: 3, ConfigMapName: configMapName},
	}
}

func TestLabeler(t *testing.T) {
	tests := []struct {
		name string
		// fixtures are the Widgets of testdata/labeler (with its ConfigMaps).
		fixtures []string
		// change is what happens once the controller runs.
		change func(f *generictest.Fake)
		// want is, per ConfigMap, the Widgets whose label it carries.
		want map[string][]string
		// wantTombstone: the Widget delete reached handlers as a tombstone.
		wantTombstone bool
		// wantSkipped are the Widgets the informer reported and skipped.
		wantSkipped []string
	}{{
		name:     "a Widget labels the ConfigMap it references",
		fixtures: []string{"widget-gear", "widget-lab"},
		want:     map[string][]string{"shop/storefront": {"gear"}, "lab/notes": {"flask"}},
	}, {
		name:     "a Widget with no reference labels nothing",
		fixtures: []string{"widget-plain"},
		want:     map[string][]string{},
	}, {
		name:     "a reference to a missing ConfigMap labels it once it exists",
		fixtures: []string{"widget-ghost"},
		change: func(f *generictest.Fake) {
			f.Create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "missing"}})
		},
		want: map[string][]string{"shop/missing": {"ghost"}},
	}, {
		name:     "two Widgets put two labels on one ConfigMap",
		fixtures: []string{"widget-gear", "widget-cog"},
		want:     map[string][]string{"shop/storefront": {"cog", "gear"}},
	}, {
		name:     "changing the reference moves the label",
		fixtures: []string{"widget-gear"},
		change:   func(f *generictest.Fake) { f.Update(gear("checkout")) },
		want:     map[string][]string{"shop/checkout": {"gear"}},
	}, {
		name:     "deleting the Widget takes its label off",
		fixtures: []string{"widget-gear", "widget-cog"},
		change:   func(f *generictest.Fake) { f.Delete(gear("")) },
		want:     map[string][]string{"shop/storefront": {"cog"}},
	}, {
		name:     "a delete the informer missed (tombstone) takes the label off too",
		fixtures: []string{"widget-gear"},
		change: func(f *generictest.Fake) {
			f.WithoutWatch(func() { f.Delete(gear("")) })
		},
		want:          map[string][]string{},
		wantTombstone: true,
	}, {
		name:        "a malformed Widget is reported and skipped, the others served",
		fixtures:    []string{"widget-malformed", "widget-cog"},
		want:        map[string][]string{"shop/storefront": {"cog"}},
		wantSkipped: []string{"shop/broken"},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fake := generictest.New(t, widget.NewScheme(), generictest.Files(fixtures(tc.fixtures...)...))
			widgets := generictest.NewInformer[*widget.Widget](fake)
			configMaps := generictest.NewInformer[*corev1.ConfigMap](fake)
			deletes := generictest.NewRecorder[*widget.Widget]()
			if _, err := widgets.AddEventHandler(deletes); err != nil {
				t.Fatal(err)
			}
			run(t, widgets, configMaps, fake)
			// The starting state, as the controller makes it.
			if tc.change != nil {
				generictest.WaitForState(configMaps, initialState(tc.fixtures), widgetLabels)
				tc.change(fake)
			}
			generictest.WaitForState(configMaps, tc.want, widgetLabels)

			tombstones := 0
			for _, e := range deletes.Events() {
				if e.Tombstone {
					tombstones++
				}
			}
			if diff := cmp.Diff(tc.wantTombstone, tombstones > 0); diff != "" {
				t.Errorf("tombstone delivered (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantSkipped, skipped(fake)); diff != "" {
				t.Errorf("skipped Widgets (-want +got):\n%s", diff)
			}
		})
	}
}

// initialState is what the controller makes of the fixtures before the
// change: the Widget gear alone labels storefront; with cog, both; ghost's
// ConfigMap does not exist.
func initialState(fixtures []string) map[string][]string {
	names := map[string]bool{}
	for _, f := range fixtures {
		names[strings.TrimPrefix(f, "widget-")] = true
	}
	state := map[string][]string{}
	for _, name := range []string{"cog", "gear"} {
		if names[name] {
			state["shop/storefront"] = append(state["shop/storefront"], name)
		}
	}
	return state
}

// run starts the controller for the test's length, and returns once it
// has reconciled the fixtures.
func run(t *testing.T, widgets *generictest.Informer[*widget.Widget], configMaps *generictest.Informer[*corev1.ConfigMap], fake *generictest.Fake) {
	client, err := typed.ClientFor[*corev1.ConfigMap](fake.Factory())
	if err != nil {
		t.Fatal(err)
	}
	c, err := labeler.New(widgets, configMaps, client, controller.WithWorkers(2))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := c.Run(ctx); err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	t.Cleanup(func() {
		cancel()
		wg.Wait()
	})
	fake.WaitIdle(c) // it has labelled what the fixtures ask for
}

// skipped returns the keys of the objects the Fake's informers reported as
// not convertible, sorted, or nil.
func skipped(fake *generictest.Fake) []string {
	var keys []string
	for _, err := range fake.Errors() {
		var conversion *generic.ConversionError
		if errors.As(err, &conversion) && !slices.Contains(keys, conversion.Key) {
			keys = append(keys, conversion.Key)
		}
	}
	slices.Sort(keys)
	return keys
}
