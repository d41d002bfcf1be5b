package controller_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/controller"
	"github.com/generic-informers/generic/generictest"
	"github.com/generic-informers/generic/internal/widget"
)

// TestSharedSourceOption: one Watches option given to two controllers
// feeds both (it fed only the last, racily).
func TestSharedSourceOption(t *testing.T) {
	fake := newFake(t)
	widgets := generictest.NewInformer[*widget.Widget](fake, generic.WithFieldSelector("metadata.name=large"))
	cms := generictest.NewInformer[*corev1.ConfigMap](fake)
	watch := controller.Watches(cms, func(cm *corev1.ConfigMap) []cache.ObjectName {
		return []cache.ObjectName{{Namespace: cm.Namespace, Name: "large"}}
	})
	var a, b calls
	record := func(c *calls) controller.Reconciler {
		return func(_ context.Context, key cache.ObjectName) (controller.Result, error) {
			c.add(key)
			return controller.Result{}, nil
		}
	}
	ca, err := controller.New("a", controller.For(widgets), record(&a), watch)
	if err != nil {
		t.Fatal(err)
	}
	cb, err := controller.New("b", controller.For(widgets), record(&b), watch)
	if err != nil {
		t.Fatal(err)
	}
	run(t, ca)
	run(t, cb)
	fake.WaitIdle(ca)
	fake.WaitIdle(cb)
	a.take()
	b.take()
	fake.Create(configMap("team-a", "x"))
	fake.WaitIdle(ca)
	fake.WaitIdle(cb)
	got := [][]string{a.take(), b.take()}
	if diff := cmp.Diff([][]string{{"team-a/large"}, {"team-a/large"}}, got); diff != "" {
		t.Errorf("keys reconciled by a and b (-want +got):\n%s", diff)
	}
}

// TestPanickingMapFunction: a map function that panics is reported; the
// process goes on (client-go would crash it).
func TestPanickingMapFunction(t *testing.T) {
	fake := newFake(t)
	widgets := generictest.NewInformer[*widget.Widget](fake, generic.WithFieldSelector("metadata.name=large"))
	cms := generictest.NewInformer[*corev1.ConfigMap](fake)
	var mu sync.Mutex
	var reported []string
	c, err := controller.New("panics", controller.For(widgets), func(context.Context, cache.ObjectName) (controller.Result, error) {
		return controller.Result{}, nil
	}, controller.Watches(cms, func(*corev1.ConfigMap) []cache.ObjectName { panic("map boom") }),
		controller.WithReconcileErrorHandler(func(_ context.Context, err error) {
			mu.Lock()
			defer mu.Unlock()
			reported = append(reported, strings.SplitN(err.Error(), "\n", 2)[0])
		}))
	if err != nil {
		t.Fatal(err)
	}
	run(t, c)
	fake.WaitIdle(c)
	fake.Create(configMap("team-a", "x"))
	fake.WaitIdle(c)
	mu.Lock()
	defer mu.Unlock()
	if diff := cmp.Diff([]string{"controller: a predicate or map function panicked on an add: map boom"}, reported); diff != "" {
		t.Errorf("reported (-want +got):\n%s", diff)
	}
}
