package generictest_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/cache"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/generictest"
	"github.com/generic-informers/generic/typed"
)

// TestSettle writes as code under test does, through each client of the
// Fake, then calls Settle: the Fake's handlers have then seen every write.
func TestSettle(t *testing.T) {
	ctx := context.Background()
	newConfigMap := func(name string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: name}}
	}
	tests := []struct {
		name    string
		options []generictest.Option
		// controller, if set, is a handler of the informer that writes.
		controller func(t *testing.T, f *generictest.Fake) cache.TypedResourceEventHandler[*corev1.ConfigMap]
		write      func(t *testing.T, f *generictest.Fake)
		want       []generictest.Event
	}{{
		name: "a create through the REST front",
		write: func(t *testing.T, f *generictest.Fake) {
			if _, err := restClientset(t, f, "").CoreV1().ConfigMaps("team-a").Create(ctx, newConfigMap("new"), metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		},
		want: []generictest.Event{{Verb: generictest.Added, Key: "team-a/new"}},
	}, {
		name: "an update through the REST front's dynamic client",
		write: func(t *testing.T, f *generictest.Fake) {
			u := &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "v1", "kind": "ConfigMap",
				"metadata": map[string]any{"namespace": "team-a", "name": "flags"}, "data": map[string]any{"beta": "false"},
			}}
			if _, err := restDynamic(t, f).Resource(configMapsGVR).Namespace("team-a").Update(ctx, u, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
		},
		want: []generictest.Event{{Verb: generictest.Modified, Key: "team-a/flags"}},
	}, {
		name: "a patch through a typed client of the factory",
		write: func(t *testing.T, f *generictest.Fake) {
			configMaps, err := typed.ClientFor[*corev1.ConfigMap](f.Factory())
			if err != nil {
				t.Fatal(err)
			}
			if _, err := configMaps.Patch(ctx, cache.ObjectName{Namespace: "team-a", Name: "flags"}, types.MergePatchType, []byte(`{"data":{"beta":"false"}}`), metav1.PatchOptions{}); err != nil {
				t.Fatal(err)
			}
		},
		want: []generictest.Event{{Verb: generictest.Modified, Key: "team-a/flags"}},
	}, {
		name: "a delete through the dynamic client",
		write: func(t *testing.T, f *generictest.Fake) {
			if err := f.Dynamic().Resource(configMapsGVR).Namespace("team-a").Delete(ctx, "flags", metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
		},
		want: []generictest.Event{{Verb: generictest.Deleted, Key: "team-a/flags"}},
	}, {
		name: "a collection delete through the clientset",
		write: func(t *testing.T, f *generictest.Fake) {
			if err := f.Clientset().CoreV1().ConfigMaps("team-a").DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
				t.Fatal(err)
			}
		},
		want: []generictest.Event{{Verb: generictest.Deleted, Key: "team-a/flags"}, {Verb: generictest.Deleted, Key: "team-a/settings"}},
	}, {
		name: "a delete, then a create of the same name",
		write: func(t *testing.T, f *generictest.Fake) {
			c := restClientset(t, f, "").CoreV1().ConfigMaps("team-a")
			if err := c.Delete(ctx, "flags", metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Create(ctx, newConfigMap("flags"), metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		},
		want: []generictest.Event{{Verb: generictest.Deleted, Key: "team-a/flags"}, {Verb: generictest.Added, Key: "team-a/flags"}},
	}, {
		name: "the writes of a handler, and the writes they set off",
		// The controller labels each ConfigMap it is told of with the
		// next step, up to done.
		controller: func(t *testing.T, f *generictest.Fake) cache.TypedResourceEventHandler[*corev1.ConfigMap] {
			next := map[string]string{"": "1", "1": "2", "2": "done"}
			step := func(cm *corev1.ConfigMap) {
				if cm.Name != "new" || cm.Labels["step"] == "done" {
					return
				}
				patch := `{"metadata":{"labels":{"step":"` + next[cm.Labels["step"]] + `"}}}`
				if _, err := f.Dynamic().Resource(configMapsGVR).Namespace(cm.Namespace).Patch(ctx, cm.Name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
					t.Errorf("the controller's patch: %v", err)
				}
			}
			return cache.TypedResourceEventHandlerFuncs[*corev1.ConfigMap]{
				AddFunc:    func(cm *corev1.ConfigMap) { step(cm) },
				UpdateFunc: func(_, cm *corev1.ConfigMap) { step(cm) },
			}
		},
		write: func(t *testing.T, f *generictest.Fake) {
			if _, err := restClientset(t, f, "").CoreV1().ConfigMaps("team-a").Create(ctx, newConfigMap("new"), metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		},
		want: []generictest.Event{
			{Verb: generictest.Added, Key: "team-a/new"},
			{Verb: generictest.Modified, Key: "team-a/new"},
			{Verb: generictest.Modified, Key: "team-a/new"},
			{Verb: generictest.Modified, Key: "team-a/new"},
		},
	}, {
		name:    "a write no informer selects",
		options: []generictest.Option{generictest.FactoryOptions(generic.WithNamespace("team-b"))},
		write: func(t *testing.T, f *generictest.Fake) {
			if _, err := f.Clientset().CoreV1().ConfigMaps("team-a").Create(ctx, newConfigMap("new"), metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		},
		want: nil,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fake := generictest.New(t, scheme.Scheme, append(tc.options, generictest.Files("../testdata/configmaps.yaml"))...)
			configMaps := generictest.NewInformer[*corev1.ConfigMap](fake)
			if tc.controller != nil {
				if _, err := configMaps.AddEventHandler(tc.controller(t, fake)); err != nil {
					t.Fatal(err)
				}
			}
			rec := generictest.NewRecorder[*corev1.ConfigMap]()
			if _, err := configMaps.AddEventHandler(rec); err != nil {
				t.Fatal(err)
			}
			rec.Reset() // the cached objects, replayed to a new handler

			tc.write(t, fake)
			fake.Settle()

			if diff := cmp.Diff(tc.want, rec.Events(), generictest.IgnoreResourceVersion()); diff != "" {
				t.Errorf("events after Settle (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSettleFails: Settle fails the test, saying what is missing, when a
// handler does not see a write within the Fake's Timeout, and when called
// inside WithoutWatch.
func TestSettleFails(t *testing.T) {
	tests := []struct {
		name string
		use  func(tb testing.TB, timeout time.Duration, release <-chan struct{})
		// wantFatal are parts of the failure's message, the first one
		// naming the wait that fails; %[1]v in them is the bound.
		wantFatal []string
	}{{
		name: "a write a handler never sees",
		use: func(tb testing.TB, timeout time.Duration, release <-chan struct{}) {
			fake := generictest.New(tb, scheme.Scheme, generictest.Timeout(timeout), generictest.Objects(settings()))
			configMaps := generictest.NewInformer[*corev1.ConfigMap](fake)
			if _, err := configMaps.AddEventHandler(cache.TypedResourceEventHandlerFuncs[*corev1.ConfigMap]{
				UpdateFunc: func(_, _ *corev1.ConfigMap) { <-release },
			}); err != nil {
				tb.Fatal(err)
			}
			if _, err := fake.Dynamic().Resource(configMapsGVR).Namespace("team-a").Patch(context.Background(), "settings",
				types.MergePatchType, []byte(`{"metadata":{"labels":{"a":"b"}}}`), metav1.PatchOptions{}); err != nil {
				tb.Fatal(err)
			}
			fake.Settle()
		},
		wantFatal: []string{"handlers did not see the writes made so far within %[1]v", "has not seen team-a/settings at resourceVersion 1000002; it has it at resourceVersion 1000001"},
	}, {
		name: "Settle inside WithoutWatch",
		use: func(tb testing.TB, timeout time.Duration, _ <-chan struct{}) {
			fake := generictest.New(tb, scheme.Scheme, generictest.Timeout(timeout), generictest.Objects(settings()))
			generictest.NewInformer[*corev1.ConfigMap](fake)
			fake.WithoutWatch(fake.Settle)
		},
		wantFatal: []string{"Settle inside WithoutWatch"},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			// As in TestWaitsEndAtTheTimeout: a set-up that did not fit
			// the bound runs again with twice the bound.
			for timeout := firstTimeout; ; timeout *= 2 {
				tb := &boundedTB{TB: t}
				release := make(chan struct{})
				tb.run(func() { tc.use(tb, timeout, release) })
				close(release)
				tb.runCleanups()
				msg := tb.message()
				if retryWithLongerBound(t, msg, tc.wantFatal, timeout) {
					continue
				}
				return
			}
		})
	}
}
