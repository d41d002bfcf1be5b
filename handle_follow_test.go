package generic_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"

	"github.com/generic-informers/generic"
)

// TestHandleFollowsReplacement: a Handle reads the informer that holds its
// hold now. After Start(ctx1), the end of ctx1 (the informer stops),
// Start(ctx2) and a create, a Handle taken before the restart lists what
// the informer that replaced its own lists: 2 objects, as one taken after.
// Without an Acquire after the restart, Start(ctx2) makes the replacement.
func TestHandleFollowsReplacement(t *testing.T) {
	tests := []struct {
		name string
		// acquireAfterRestart takes a second Handle after Start(ctx2).
		acquireAfterRestart bool
	}{
		{name: "an Acquire after the restart", acquireAfterRestart: true},
		{name: "no Acquire after the restart"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			client := newDynamicClient(t, "testdata/configmaps.yaml")
			factory := newFactory[*unstructured.Unstructured](generic.DynamicSource(client), nil, generic.WithNamespace("team-b"))
			defer factory.Shutdown()
			ctx, cancel := testContext(t)
			defer cancel()

			old := acquire(factory, configMapsGVR)
			oldShared := old.Informer()
			ctx1, end1 := context.WithCancel(ctx)
			factory.Start(ctx1)
			if err := factory.WaitForCacheSync(ctx).AsError(); err != nil {
				t.Fatal(err)
			}
			// A NamespaceLister taken, and read, before the restart.
			inTeamB := old.Lister().Namespace("team-b")
			if _, err := inTeamB.Get("settings"); err != nil {
				t.Fatal(err)
			}
			end1()
			waitForState(t, old, generic.Stopped)

			factory.Start(ctx)
			handles := map[string]generic.Handle[*unstructured.Unstructured]{"taken before the restart": old}
			// latest is the Handle whose cache is waited for: the one
			// taken last.
			latest := old
			if tc.acquireAfterRestart {
				latest = acquire(factory, configMapsGVR)
				handles["taken after the restart"] = latest
			}
			if err := factory.WaitForCacheSync(ctx).AsError(); err != nil {
				t.Fatal(err)
			}
			if _, err := client.Resource(configMapsGVR).Namespace("team-b").Create(ctx, newConfigMap("team-b", "second", "green"), metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			// The fake client sets no resourceVersion, so WaitForWrite
			// cannot tell: wait until the cache holds the object.
			waitUntil(t, "the newest Handle lists the create", func() bool {
				_, err := latest.Lister().Namespace("team-b").Get("second")
				return err == nil
			})
			for name, h := range handles {
				objs, err := h.Lister().List(labels.Everything())
				if err != nil {
					t.Fatalf("%s: List: %v", name, err)
				}
				if diff := cmp.Diff([]string{"team-b/second", "team-b/settings"}, keysOf(t, objs)); diff != "" {
					t.Errorf("%s: listed (-want +got):\n%s", name, diff)
				}
				if diff := cmp.Diff(generic.Synced, h.Status().State); diff != "" {
					t.Errorf("%s: state (-want +got):\n%s", name, diff)
				}
			}
			objs, err := inTeamB.List(labels.Everything())
			if err != nil {
				t.Fatalf("Namespace(team-b).List: %v", err)
			}
			if diff := cmp.Diff([]string{"team-b/second", "team-b/settings"}, keysOf(t, objs)); diff != "" {
				t.Errorf("Namespace(team-b) taken before the restart: listed (-want +got):\n%s", diff)
			}
			if old.Informer() == oldShared {
				t.Error("the Handle taken before the restart still hands out the stopped shared informer")
			}
		})
	}
}

// TestHandleOfStoppedInformerFails: once the informer a Handle's hold is on
// has stopped and nothing replaced it yet (its Start context ended, no
// Start since), the Handle's reads fail with an error wrapping
// ErrInformerStopped, where they returned the frozen cache and no error.
func TestHandleOfStoppedInformerFails(t *testing.T) {
	client := newDynamicClient(t, "testdata/configmaps.yaml")
	factory := newFactory[*unstructured.Unstructured](generic.DynamicSource(client), nil, generic.WithNamespace("team-b"))
	defer factory.Shutdown()
	ctx, cancel := testContext(t)
	defer cancel()
	h := acquire(factory, configMapsGVR)
	startCtx, stop := context.WithCancel(ctx)
	factory.Start(startCtx)
	if err := factory.WaitForCacheSync(ctx).AsError(); err != nil {
		t.Fatal(err)
	}
	stop()
	waitForState(t, h, generic.Stopped)

	tests := []struct {
		name string
		read func(generic.Lister[*unstructured.Unstructured]) error
	}{
		{name: "List", read: func(l generic.Lister[*unstructured.Unstructured]) error {
			_, err := l.List(labels.Everything())
			return err
		}},
		{name: "Get", read: func(l generic.Lister[*unstructured.Unstructured]) error {
			_, err := l.Get("settings")
			return err
		}},
		{name: "ByIndex", read: func(l generic.Lister[*unstructured.Unstructured]) error {
			_, err := l.ByIndex(cache.NamespaceIndex, "team-b")
			return err
		}},
		{name: "Namespace(ns).List", read: func(l generic.Lister[*unstructured.Unstructured]) error {
			_, err := l.Namespace("team-b").List(labels.Everything())
			return err
		}},
		{name: "Namespace(ns).Get", read: func(l generic.Lister[*unstructured.Unstructured]) error {
			_, err := l.Namespace("team-b").Get("settings")
			return err
		}},
		{name: "Namespace(ns).ByIndex", read: func(l generic.Lister[*unstructured.Unstructured]) error {
			_, err := l.Namespace("team-b").ByIndex(cache.NamespaceIndex, "team-b")
			return err
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.read(h.Lister())
			if diff := cmp.Diff(true, errors.Is(err, generic.ErrInformerStopped)); diff != "" {
				t.Errorf("the read's error %v wraps ErrInformerStopped (-want +got):\n%s", err, diff)
			}
		})
	}
}

// TestReplacementKeepsAddedIndexes: the informer that replaces a stopped
// one is made as its predecessor is now: with the indexes added to it
// since it was made, whichever way. The replacement was made from the
// first Acquire's Options alone, and ByIndex on an added index failed.
func TestReplacementKeepsAddedIndexes(t *testing.T) {
	tests := []struct {
		name string
		add  func(t *testing.T, factory *generic.Factory[*corev1.ConfigMap], h generic.Handle[*corev1.ConfigMap]) error
	}{
		{name: "a later Acquire's WithIndexers", add: func(_ *testing.T, factory *generic.Factory[*corev1.ConfigMap], _ generic.Handle[*corev1.ConfigMap]) error {
			_, err := factory.Acquire(configMapsGVR, generic.WithIndexers(cache.Indexers{"byColor": configMapsByColor}))
			return err
		}},
		{name: "Handle.AddIndexers", add: func(_ *testing.T, _ *generic.Factory[*corev1.ConfigMap], h generic.Handle[*corev1.ConfigMap]) error {
			return h.AddIndexers(cache.TypedIndexers[*corev1.ConfigMap]{"byColor": func(cm *corev1.ConfigMap) ([]string, error) {
				return configMapsByColor(cm)
			}})
		}},
		{name: "Informer().AddIndexers", add: func(_ *testing.T, _ *generic.Factory[*corev1.ConfigMap], h generic.Handle[*corev1.ConfigMap]) error {
			return h.Informer().AddIndexers(cache.Indexers{"byColor": configMapsByColor})
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			client := newDynamicClient(t, "testdata/configmaps.yaml")
			factory := newFactory(generic.DynamicSource(client), generic.FromUnstructured[*corev1.ConfigMap]())
			defer factory.Shutdown()
			ctx, cancel := testContext(t)
			defer cancel()
			h := acquire(factory, configMapsGVR)
			ctx1, end1 := context.WithCancel(ctx)
			factory.Start(ctx1)
			if err := factory.WaitForCacheSync(ctx).AsError(); err != nil {
				t.Fatal(err)
			}
			if err := tc.add(t, factory, h); err != nil {
				t.Fatal(err)
			}
			end1()
			waitForState(t, h, generic.Stopped)
			stopped := h.Informer()
			factory.Start(ctx)
			if err := factory.WaitForCacheSync(ctx).AsError(); err != nil {
				t.Fatal(err)
			}
			if h.Informer() == stopped {
				t.Fatal("the Handle reads the stopped informer, not its replacement")
			}
			blue, err := h.Lister().ByIndex("byColor", "blue")
			if err != nil {
				t.Fatalf("ByIndex on the replacement: %v", err)
			}
			if diff := cmp.Diff([]string{"team-a/settings"}, keysOf(t, blue)); diff != "" {
				t.Errorf("ByIndex(byColor, blue) on the replacement (-want +got):\n%s", diff)
			}
		})
	}
}

// TestReplacementKeepsSetTransform: a transform set with
// Informer().SetTransform before the informer ran is the replacement's
// too, and a later Acquire that asks for none is refused: the informer's
// objects are transformed.
func TestReplacementKeepsSetTransform(t *testing.T) {
	client := newDynamicClient(t, "testdata/configmaps.yaml")
	factory := newFactory(generic.DynamicSource(client), generic.FromUnstructured[*corev1.ConfigMap]())
	defer factory.Shutdown()
	ctx, cancel := testContext(t)
	defer cancel()
	h := acquire(factory, configMapsGVR, generic.WithNamespace("team-a"))
	if err := h.Informer().SetTransform(dropData); err != nil {
		t.Fatal(err)
	}
	var conflict *generic.OptionConflictError
	if _, err := factory.Acquire(configMapsGVR, generic.WithNamespace("team-a")); !errors.As(err, &conflict) {
		t.Errorf("an Acquire without the transform set: error %v, want an *OptionConflictError", err)
	}
	ctx1, end1 := context.WithCancel(ctx)
	factory.Start(ctx1)
	if err := factory.WaitForCacheSync(ctx).AsError(); err != nil {
		t.Fatal(err)
	}
	end1()
	waitForState(t, h, generic.Stopped)
	factory.Start(ctx)
	if err := factory.WaitForCacheSync(ctx).AsError(); err != nil {
		t.Fatal(err)
	}
	settings, err := h.Lister().Namespace("team-a").Get("settings")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string(nil), settings.Data); diff != "" {
		t.Errorf("the replacement's object, transformed (-want +got):\n%s", diff)
	}
}
