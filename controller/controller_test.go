package controller_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/controller"
	"github.com/generic-informers/generic/generictest"
	"github.com/generic-informers/generic/internal/widget"
)

// TestEnqueue: which events of the primary and of secondary objects
// reconcile which keys.
func TestEnqueue(t *testing.T) {
	owned := func(name, owner string) *corev1.ConfigMap {
		cm := configMap("team-a", name)
		cm.OwnerReferences = []metav1.OwnerReference{{APIVersion: "example.com/v1", Kind: "Widget", Name: owner, UID: "u", Controller: new(true)}}
		return cm
	}
	tests := []struct {
		name string
		// secondary makes the controller's secondary sources; nil: none.
		secondary func(widgets generic.Informer[*widget.Widget], cms generic.Informer[*corev1.ConfigMap]) []controller.Option
		// predicates filter the primary's (Widgets') events.
		predicates []controller.Predicate[*widget.Widget]
		change     func(f *generictest.Fake)
		want       []string
	}{{
		name: "a created primary is reconciled",
		change: func(f *generictest.Fake) {
			f.Create(&widget.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "new"}})
		},
		want: []string{"team-a/new"},
	}, {
		name: "a deleted primary is reconciled",
		change: func(f *generictest.Fake) {
			f.Delete(&widget.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "large"}})
		},
		want: []string{"team-a/large"},
	}, {
		name:       "a predicate filters adds and updates",
		predicates: []controller.Predicate[*widget.Widget]{controller.LabelsMatch[*widget.Widget](labels.SelectorFromSet(labels.Set{"size": "small"}))},
		change: func(f *generictest.Fake) {
			f.Create(&widget.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "big", Labels: map[string]string{"size": "large"}}})
			f.Create(&widget.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "tiny", Labels: map[string]string{"size": "small"}}})
		},
		want: []string{"team-a/tiny"},
	}, {
		name:       "LabelsChanged passes a label change, not a spec change",
		predicates: []controller.Predicate[*widget.Widget]{controller.LabelsChanged[*widget.Widget]},
		change: func(f *generictest.Fake) {
			f.Update(&widget.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "large", Labels: map[string]string{"size": "large"}}, Spec: widget.Spec{Size: 11}})
			f.Update(&widget.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: "team-b", Name: "small", Labels: map[string]string{"size": "tiny"}}})
		},
		want: []string{"team-b/small"},
	}, {
		name: "Watches maps a secondary object to its primaries",
		secondary: func(_ generic.Informer[*widget.Widget], cms generic.Informer[*corev1.ConfigMap]) []controller.Option {
			return []controller.Option{controller.Watches(cms, func(cm *corev1.ConfigMap) []cache.ObjectName {
				return []cache.ObjectName{{Namespace: cm.Namespace, Name: cm.Data["widget"]}}
			})}
		},
		change: func(f *generictest.Fake) {
			cm := configMap("team-b", "points")
			cm.Data = map[string]string{"widget": "small"}
			f.Create(cm)
		},
		want: []string{"team-b/small"},
	}, {
		name: "Owns maps an object to its controlling owner of the kind",
		secondary: func(_ generic.Informer[*widget.Widget], cms generic.Informer[*corev1.ConfigMap]) []controller.Option {
			return []controller.Option{controller.Owns(cms, schema.GroupKind{Group: "example.com", Kind: "Widget"})}
		},
		change: func(f *generictest.Fake) {
			f.Create(owned("owned", "large"))
			f.Create(configMap("team-a", "orphan"))
		},
		want: []string{"team-a/large"},
	}, {
		name: "WatchesByIndex maps through the primary's index",
		secondary: func(widgets generic.Informer[*widget.Widget], cms generic.Informer[*corev1.ConfigMap]) []controller.Option {
			return []controller.Option{controller.WatchesByIndex(cms, widgets, cache.NamespaceIndex, controller.NamespaceOf)}
		},
		change: func(f *generictest.Fake) { f.Create(configMap("team-a", "any")) },
		want:   []string{"team-a/large", "team-a/small"},
	}, {
		name: "WatchesByIndex also reconciles the primaries its index function fails on",
		secondary: func(widgets generic.Informer[*widget.Widget], cms generic.Informer[*corev1.ConfigMap]) []controller.Option {
			err := widgets.AddIndexers(cache.TypedIndexers[*widget.Widget]{"color": func(w *widget.Widget) ([]string, error) {
				if w.Spec.Color == "red" {
					return nil, errors.New("red is not indexed")
				}
				return []string{w.Spec.Color}, nil
			}})
			if err != nil {
				panic(err)
			}
			return []controller.Option{controller.WatchesByIndex(cms, widgets, "color", func(cm *corev1.ConfigMap) []string {
				return []string{cm.Data["color"]}
			})}
		},
		change: func(f *generictest.Fake) {
			cm := configMap("team-a", "paint")
			cm.Data = map[string]string{"color": "blue"}
			f.Create(cm)
		},
		// team-a/large's color is not indexed: it may be blue.
		want: []string{"team-a/large", "team-a/small"},
	}, {
		name: "unsharded, a key mapped to a missing primary is reconciled",
		secondary: func(_ generic.Informer[*widget.Widget], cms generic.Informer[*corev1.ConfigMap]) []controller.Option {
			return []controller.Option{controller.Watches(cms, func(cm *corev1.ConfigMap) []cache.ObjectName {
				return []cache.ObjectName{{Namespace: cm.Namespace, Name: "to-be-made"}}
			})}
		},
		change: func(f *generictest.Fake) { f.Create(configMap("team-a", "any")) },
		want:   []string{"team-a/to-be-made"},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fake := newFake(t)
			widgets := generictest.NewInformer[*widget.Widget](fake)
			cms := generictest.NewInformer[*corev1.ConfigMap](fake)
			var opts []controller.Option
			if tc.secondary != nil {
				opts = tc.secondary(widgets, cms)
			}
			var got calls
			c, err := controller.New("test", controller.For(widgets, tc.predicates...), func(_ context.Context, key cache.ObjectName) (controller.Result, error) {
				got.add(key)
				return controller.Result{}, nil
			}, opts...)
			if err != nil {
				t.Fatal(err)
			}
			run(t, c)
			fake.WaitIdle(c)
			got.take() // the seeded Widgets
			tc.change(fake)
			fake.WaitIdle(c)
			if diff := cmp.Diff(tc.want, got.take()); diff != "" {
				t.Errorf("reconciled keys (-want +got):\n%s", diff)
			}
		})
	}
}

// TestResults: how a reconcile's result and errors requeue its key.
func TestResults(t *testing.T) {
	tests := []struct {
		name string
		// first is what the first reconcile of team-a/large does.
		first func() (controller.Result, error)
		// wantCalls is how many reconciles team-a/large gets.
		wantCalls int
		// wantReported: the errors reported, cut at the first line.
		wantReported []string
	}{{
		name:      "done: one call",
		first:     func() (controller.Result, error) { return controller.Result{}, nil },
		wantCalls: 1,
	}, {
		name:         "an error is reported and retried",
		first:        func() (controller.Result, error) { return controller.Result{}, errors.New("boom") },
		wantCalls:    2,
		wantReported: []string{"boom"},
	}, {
		name:         "a panic is recovered, reported and retried",
		first:        func() (controller.Result, error) { panic("kaboom") },
		wantCalls:    2,
		wantReported: []string{"controller test: reconcile of team-a/large panicked: kaboom"},
	}, {
		name:      "Requeue reconciles again, reporting nothing",
		first:     func() (controller.Result, error) { return controller.Result{Requeue: true}, nil },
		wantCalls: 2,
	}, {
		name:      "RequeueAfter reconciles again after the delay",
		first:     func() (controller.Result, error) { return controller.Result{RequeueAfter: time.Millisecond}, nil },
		wantCalls: 2,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fake := newFake(t)
			widgets := generictest.NewInformer[*widget.Widget](fake)
			var got calls
			var reportedMu sync.Mutex
			var reported []string
			secondCall := make(chan struct{})
			c, err := controller.New("test", controller.For(widgets), func(_ context.Context, key cache.ObjectName) (controller.Result, error) {
				if key.String() != "team-a/large" {
					return controller.Result{}, nil
				}
				switch got.add(key) {
				case 1:
					return tc.first()
				case 2:
					close(secondCall)
				}
				return controller.Result{}, nil
			}, fastRetries(), controller.WithReconcileErrorHandler(func(_ context.Context, err error) {
				reportedMu.Lock()
				defer reportedMu.Unlock()
				reported = append(reported, strings.SplitN(err.Error(), "\n", 2)[0])
			}))
			if err != nil {
				t.Fatal(err)
			}
			run(t, c)
			if tc.wantCalls == 2 {
				<-secondCall // a key waiting for its RequeueAfter is not work for WaitIdle
			}
			fake.WaitIdle(c)
			if diff := cmp.Diff(tc.wantCalls, len(got.take())); diff != "" {
				t.Errorf("reconciles of team-a/large (-want +got):\n%s", diff)
			}
			reportedMu.Lock()
			defer reportedMu.Unlock()
			if diff := cmp.Diff(tc.wantReported, reported); diff != "" {
				t.Errorf("reported errors (-want +got):\n%s", diff)
			}
		})
	}
}

// TestWorkersStartSynced: the first reconcile finds every informer's
// initial list in its cache.
func TestWorkersStartSynced(t *testing.T) {
	fake := newFake(t, generictest.Objects(configMap("team-a", "settings"), configMap("team-b", "settings")))
	widgets := generictest.NewInformer[*widget.Widget](fake)
	cms := generictest.NewInformer[*corev1.ConfigMap](fake)
	type seen struct{ Widgets, ConfigMaps int }
	var mu sync.Mutex
	var first *seen
	c, err := controller.New("test", controller.For(widgets), func(context.Context, cache.ObjectName) (controller.Result, error) {
		mu.Lock()
		defer mu.Unlock()
		if first == nil {
			ws, _ := widgets.Lister().List(labels.Everything())
			cs, _ := cms.Lister().List(labels.Everything())
			first = &seen{Widgets: len(ws), ConfigMaps: len(cs)}
		}
		return controller.Result{}, nil
	}, controller.Watches(cms, func(*corev1.ConfigMap) []cache.ObjectName { return nil }))
	if err != nil {
		t.Fatal(err)
	}
	run(t, c)
	fake.WaitIdle(c)
	mu.Lock()
	defer mu.Unlock()
	if diff := cmp.Diff(&seen{Widgets: 3, ConfigMaps: 2}, first); diff != "" {
		t.Errorf("caches at the first reconcile (-want +got):\n%s", diff)
	}
}

// TestShutdownWaitsForReconciles: Run returns only once the reconciles in
// progress have returned (goleak checks nothing is left).
func TestShutdownWaitsForReconciles(t *testing.T) {
	fake := newFake(t)
	widgets := generictest.NewInformer[*widget.Widget](fake)
	started := make(chan struct{}, 3)
	var finished sync.WaitGroup
	finished.Add(3)
	c, err := controller.New("test", controller.For(widgets), func(ctx context.Context, _ cache.ObjectName) (controller.Result, error) {
		defer finished.Done()
		started <- struct{}{}
		<-ctx.Done()
		return controller.Result{}, nil
	}, controller.WithWorkers(3))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	returned := make(chan error)
	go func() { returned <- c.Run(ctx) }()
	for range 3 {
		<-started
	}
	cancel()
	if err := <-returned; err != nil {
		t.Fatalf("Run: %v", err)
	}
	finished.Wait() // does not block: Run returned after the three
	if err := c.Run(context.Background()); err == nil {
		t.Error("a second Run: no error")
	}
}

// TestShardedMapping: on a sharded controller, a key mapped from a
// secondary object is reconciled only if the primary's cache holds it.
func TestShardedMapping(t *testing.T) {
	fake := newFake(t)
	// Only the primary is sharded: every ConfigMap event maps to a key.
	widgets := generictest.NewInformer[*widget.Widget](fake, generic.WithShard(0, 2))
	cms := generictest.NewInformer[*corev1.ConfigMap](fake)
	var got calls
	c, err := controller.New("test", controller.For(widgets), func(_ context.Context, key cache.ObjectName) (controller.Result, error) {
		got.add(key)
		return controller.Result{}, nil
	}, controller.Watches(cms, func(cm *corev1.ConfigMap) []cache.ObjectName {
		return []cache.ObjectName{{Namespace: cm.Namespace, Name: cm.Name}}
	}))
	if err != nil {
		t.Fatal(err)
	}
	run(t, c)
	fake.WaitIdle(c)
	held, _ := widgets.Lister().List(labels.Everything())
	got.take()
	var want []string
	for _, name := range []string{"small", "large"} {
		fake.Create(configMap("team-a", name))
		for _, w := range held {
			if w.Namespace == "team-a" && w.Name == name {
				want = append(want, "team-a/"+name)
			}
		}
	}
	fake.WaitIdle(c)
	if diff := cmp.Diff(want, got.take()); diff != "" {
		t.Errorf("reconciled keys (-want +got):\n%s", diff)
	}
}

// TestNewErrors: bad input is an error, not a panic.
func TestNewErrors(t *testing.T) {
	fake := newFake(t)
	widgets := generictest.NewInformer[*widget.Widget](fake)
	noop := func(context.Context, cache.ObjectName) (controller.Result, error) { return controller.Result{}, nil }
	var nilInformer generic.Informer[*widget.Widget]
	tests := []struct {
		name      string
		ctrlName  string
		primary   controller.Primary
		reconcile controller.Reconciler
		opts      []controller.Option
		want      string
	}{
		{name: "empty name", primary: controller.For(widgets), reconcile: noop, want: "controller: empty name"},
		{name: "no primary", ctrlName: "c", reconcile: noop, want: "controller: no primary; make one with For"},
		{name: "nil informer", ctrlName: "c", primary: controller.For(nilInformer), reconcile: noop, want: "controller: nil informer"},
		{name: "nil reconciler", ctrlName: "c", primary: controller.For(widgets), want: "controller: nil Reconciler"},
		{name: "no workers", ctrlName: "c", primary: controller.For(widgets), reconcile: noop, opts: []controller.Option{controller.WithWorkers(0)}, want: "controller: 0 workers; at least 1"},
		{name: "nil map function", ctrlName: "c", primary: controller.For(widgets), reconcile: noop,
			opts: []controller.Option{controller.Watches[*widget.Widget](widgets, nil)}, want: "controller: Watches of example.com/v1, Resource=widgets: nil map function"},
		{name: "zero consistency timeout", ctrlName: "c", primary: controller.For(widgets), reconcile: noop,
			opts: []controller.Option{controller.WithConsistencyTimeout(0)}, want: "controller: consistency timeout 0s; it must be positive"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := controller.New(tc.ctrlName, tc.primary, tc.reconcile, tc.opts...)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("New error (-want +got):\n%s", diff)
			}
		})
	}
}
