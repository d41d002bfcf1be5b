package generictest_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/generictest"
	"github.com/generic-informers/generic/internal/widget"
)

func newWidget(namespace, name string, size int32, labels map[string]string) *widget.Widget {
	return &widget.Widget{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: labels},
		Spec:       widget.Spec{Size: size},
	}
}

// malformedWidget has a spec.size that is not an integer.
func malformedWidget(namespace, name string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"namespace": namespace, "name": name},
		"spec":     map[string]any{"size": "big"},
	}}
}

// TestChangesReachHandlers drives changes through the Fake and compares, right
// after each, what a recorder on a typed informer received: the Fake's
// changes return only once handlers have seen them.
func TestChangesReachHandlers(t *testing.T) {
	tests := []struct {
		name       string
		options    []generictest.Option
		change     func(f *generictest.Fake)
		want       []generictest.Event
		wantErrors int
	}{{
		name:   "create",
		change: func(f *generictest.Fake) { f.Create(newWidget("team-a", "new", 3, nil)) },
		want:   []generictest.Event{{Verb: generictest.Added, Key: "team-a/new"}},
	}, {
		name:   "update",
		change: func(f *generictest.Fake) { f.Update(newWidget("team-a", "small", 4, nil)) },
		want:   []generictest.Event{{Verb: generictest.Modified, Key: "team-a/small"}},
	}, {
		name:   "delete",
		change: func(f *generictest.Fake) { f.Delete(newWidget("team-b", "small", 0, nil)) },
		want:   []generictest.Event{{Verb: generictest.Deleted, Key: "team-b/small"}},
	}, {
		name: "a delete missed by the watch arrives as a tombstone",
		change: func(f *generictest.Fake) {
			f.WithoutWatch(func() { f.Delete(newWidget("team-a", "large", 0, nil)) })
		},
		// The relist also tells handlers of every object still there.
		want: []generictest.Event{
			{Verb: generictest.Deleted, Key: "team-a/large", Tombstone: true},
			{Verb: generictest.Modified, Key: "team-a/small"},
			{Verb: generictest.Modified, Key: "team-b/small"},
		},
	}, {
		name:       "a malformed object is reported and skipped",
		change:     func(f *generictest.Fake) { f.Create(malformedWidget("team-a", "broken")) },
		want:       nil,
		wantErrors: 1,
	}, {
		name:    "a label change out of the selector is a delete",
		options: []generictest.Option{generictest.FactoryOptions(generic.WithLabelSelector("size=small"))},
		change: func(f *generictest.Fake) {
			f.Update(newWidget("team-a", "small", 1, map[string]string{"size": "tiny"}))
		},
		want: []generictest.Event{{Verb: generictest.Deleted, Key: "team-a/small"}},
	}, {
		name:    "a namespace's informer does not wait for other namespaces",
		options: []generictest.Option{generictest.FactoryOptions(generic.WithNamespace("team-b"))},
		change:  func(f *generictest.Fake) { f.Create(newWidget("team-a", "elsewhere", 1, nil)) },
		want:    nil,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fake := generictest.New(t, widget.NewScheme(), append(tc.options, generictest.Files("../testdata/widgets.yaml"))...)
			widgets := generictest.NewInformer[*widget.Widget](fake)
			rec := generictest.NewRecorder[*widget.Widget]()
			if _, err := widgets.AddEventHandler(rec); err != nil {
				t.Fatal(err)
			}
			rec.Reset() // the cached objects, replayed to a new handler
			tc.change(fake)
			if diff := cmp.Diff(tc.want, rec.Events(), generictest.IgnoreResourceVersion(), generictest.IgnoreOrder()); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			var conversion *generic.ConversionError
			errs := fake.Errors()
			for _, err := range errs {
				if !errors.As(err, &conversion) {
					t.Errorf("unexpected error %v", err)
				}
			}
			if diff := cmp.Diff(tc.wantErrors, len(errs)); diff != "" {
				t.Errorf("errors reported (-want +got):\n%s\n%v", diff, errs)
			}
		})
	}
}

// TestSeedingAndInformers seeds a Fake from YAML (built-in kinds, a custom
// resource with its CRD, a cluster-scoped one) and from Go objects, and reads
// them through typed and unstructured informers.
func TestSeedingAndInformers(t *testing.T) {
	t.Parallel()
	extra := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "team-b", Name: "from-go"}}
	fake := generictest.New(t, widget.NewScheme(),
		generictest.Files("../testdata/configmaps.yaml", "../testdata/crds/gizmos.example.com.yaml", "../testdata/gizmos.yaml", "../testdata/widgets.yaml"),
		generictest.Objects(extra))
	configMaps := generictest.NewInformer[*corev1.ConfigMap](fake)
	widgets := generictest.NewInformer[*widget.Widget](fake)
	gizmos := generictest.NewUnstructuredInformer(fake, schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "gizmos"})

	keys := func(objs []metav1.Object) []string {
		var ks []string
		for _, o := range objs {
			if o.GetNamespace() != "" {
				ks = append(ks, o.GetNamespace()+"/"+o.GetName())
			} else {
				ks = append(ks, o.GetName())
			}
		}
		return ks
	}
	generictest.WaitForState(configMaps, []string{"team-a/flags", "team-a/settings", "team-b/from-go", "team-b/settings"},
		func(objs []*corev1.ConfigMap) []string { return keys(asMeta(objs)) })
	generictest.WaitForState(widgets, []string{"team-a/large", "team-a/small", "team-b/small"},
		func(objs []*widget.Widget) []string { return keys(asMeta(objs)) })
	generictest.WaitForState(gizmos, []string{"alpha", "beta"},
		func(objs []*unstructured.Unstructured) []string { return keys(asMeta(objs)) })
}

func asMeta[T metav1.Object](objs []T) []metav1.Object {
	ret := make([]metav1.Object, len(objs))
	for i, o := range objs {
		ret[i] = o
	}
	return ret
}

// TestClusterScopedUnderANamespace: a Fake limited to a namespace still
// waits for the typed informers of cluster-scoped kinds, which watch every
// namespace, and does not take an object outside the namespace for one
// they will never see.
func TestClusterScopedUnderANamespace(t *testing.T) {
	namespace := func(name string) *corev1.Namespace {
		return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	}
	tests := []struct {
		name   string
		change func(f *generictest.Fake)
		want   []generictest.Event
	}{{
		name:   "create",
		change: func(f *generictest.Fake) { f.Create(namespace("new")) },
		want:   []generictest.Event{{Verb: generictest.Added, Key: "new"}},
	}, {
		name:   "delete",
		change: func(f *generictest.Fake) { f.Delete(namespace("team-b")) },
		want:   []generictest.Event{{Verb: generictest.Deleted, Key: "team-b"}},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fake := generictest.New(t, widget.NewScheme(), generictest.FactoryOptions(generic.WithNamespace("team-a")), generictest.Objects(namespace("team-a"), namespace("team-b")))
			namespaces := generictest.NewInformer[*corev1.Namespace](fake)
			rec := generictest.NewRecorder[*corev1.Namespace]()
			if _, err := namespaces.AddEventHandler(rec); err != nil {
				t.Fatal(err)
			}
			rec.Reset() // the cached objects, replayed to a new handler
			tc.change(fake)
			if diff := cmp.Diff(tc.want, rec.Events(), generictest.IgnoreResourceVersion()); diff != "" {
				t.Errorf("events right after the change (-want +got):\n%s", diff)
			}
		})
	}
}
