package controller_test

import (
	"context"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/controller"
	"github.com/generic-informers/generic/generictest"
	"github.com/generic-informers/generic/internal/widget"
)

// TestShardedFromConfiguration: whether a controller is sharded (a key
// mapped from a secondary object whose primary its cache does not hold is
// another replica's, and dropped) comes from the primary informer's shard
// (generic.Status.CurrentShard), not from the text of Status.Shard. An
// informer that holds every object reconciles such a key (its primary is
// gone); one that holds a shard of several does not. The last case is
// where the text misleads: a factory of the whole resource widening to a
// shard ("0/1+0/2") still holds every object.
func TestShardedFromConfiguration(t *testing.T) {
	tests := []struct {
		name string
		// fake and informer are the options of the Fake's factory and of
		// the primary's informer.
		fake     []generictest.Option
		informer []generic.InformerOption
		// widen, if set, is a shard the factory widens to (BeginReshard)
		// before the controller runs.
		widen   *generic.Shard
		sharded bool
	}{
		{name: "unsharded"},
		{name: "WithShard(0, 2)", informer: []generic.InformerOption{generic.WithShard(0, 2)}, sharded: true},
		{name: "WithShard(1, 2)", informer: []generic.InformerOption{generic.WithShard(1, 2)}, sharded: true},
		{name: "factory WithShard(1, 3)", fake: []generictest.Option{generictest.FactoryOptions(generic.WithShard(1, 3))}, sharded: true},
		{name: "sole member of a membership", fake: []generictest.Option{generictest.FactoryOptions(generic.WithMembership(soleMember()))}},
		{name: "whole, widening to 0/2", widen: &generic.Shard{Index: 0, Count: 2}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fake := newFake(t, tc.fake...)
			widgets := generictest.NewInformer[*widget.Widget](fake, tc.informer...)
			cms := generictest.NewInformer[*corev1.ConfigMap](fake)
			if tc.widen != nil {
				if err := fake.Factory().BeginReshard(t.Context(), *tc.widen); err != nil {
					t.Fatal(err)
				}
			}
			var got calls
			c, err := controller.New("sharded", controller.For(widgets), func(_ context.Context, key cache.ObjectName) (controller.Result, error) {
				got.add(key)
				return controller.Result{}, nil
			}, controller.Watches(cms, func(cm *corev1.ConfigMap) []cache.ObjectName {
				return []cache.ObjectName{{Namespace: cm.Namespace, Name: cm.Name}}
			}))
			if err != nil {
				t.Fatal(err)
			}
			if widgets.Ownership().Changed != nil {
				// Owned before Run: no change of ownership races the
				// keys below.
				waitOwnsAll(t, widgets)
			}
			run(t, c)
			fake.WaitIdle(c)
			got.take()
			held, err := widgets.Lister().List(labels.Everything())
			if err != nil {
				t.Fatal(err)
			}
			// A key of each widget of team-a, held or not, and of none.
			var want []string
			for _, name := range []string{"large", "small", "ghost"} {
				fake.Create(configMap("team-a", name))
				isHeld := false
				for _, w := range held {
					isHeld = isHeld || w.Namespace == "team-a" && w.Name == name
				}
				if isHeld || !tc.sharded {
					want = append(want, "team-a/"+name)
				}
			}
			fake.WaitIdle(c)
			slices.Sort(want)
			if diff := cmp.Diff(want, got.take()); diff != "" {
				t.Errorf("reconciled keys (-want +got):\n%s", diff)
			}
		})
	}
}
