package generictest_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/generictest"
	"github.com/generic-informers/generic/internal/shardsel"
	"github.com/generic-informers/generic/internal/widget"
)

// namespacesOfShard returns a namespace of shard 0 of 2 by namespace, and
// one of shard 1.
func namespacesOfShard(t *testing.T) (in, out string) {
	t.Helper()
	selector, _, _ := shardsel.New(shardsel.Range{Index: 0, Count: 2}).Selection("object.metadata.namespace")
	for i := 0; in == "" || out == ""; i++ {
		name := fmt.Sprintf("ns-%d", i)
		matches, err := selector.Matches(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Namespace: name}})
		if err != nil {
			t.Fatal(err)
		}
		if matches && in == "" {
			in = name
		} else if !matches && out == "" {
			out = name
		}
	}
	return in, out
}

// TestInformerSelections: the Fake learns what each informer selects from
// its requests (the factory's options and the informer's own: namespace,
// labels, fields, shard) and waits, after each change, only for the
// handlers of the informers that see it. A wait for a handler that never
// sees the change would fail the test at the Fake's timeout.
func TestInformerSelections(t *testing.T) {
	tests := []struct {
		name     string
		factory  []generic.FactoryOption
		informer []generic.InformerOption
		change   func(f *generictest.Fake, inShard, outShard string)
		want     []generictest.Event
	}{{
		name:    "a replica does not wait for a change in another shard",
		factory: []generic.FactoryOption{generic.WithShard(0, 2), generic.WithShardKey(generic.ShardByNamespace)},
		change: func(f *generictest.Fake, inShard, outShard string) {
			f.Create(newWidget(outShard, "theirs", 1, nil))
			f.Create(newWidget(inShard, "mine", 1, nil))
		},
		want: []generictest.Event{{Verb: generictest.Added, Key: "/mine"}},
	}, {
		name:     "an informer's own shard",
		informer: []generic.InformerOption{generic.WithShard(0, 2), generic.WithShardKey(generic.ShardByNamespace)},
		change: func(f *generictest.Fake, inShard, outShard string) {
			f.Create(newWidget(outShard, "theirs", 1, nil))
			f.Create(newWidget(inShard, "mine", 1, nil))
		},
		want: []generictest.Event{{Verb: generictest.Added, Key: "/mine"}},
	}, {
		name:     "an informer's label selector",
		informer: []generic.InformerOption{generic.WithLabelSelector("size=small")},
		change: func(f *generictest.Fake, inShard, _ string) {
			f.Create(newWidget(inShard, "large", 1, map[string]string{"size": "large"}))
			f.Create(newWidget(inShard, "mine", 1, map[string]string{"size": "small"}))
		},
		want: []generictest.Event{{Verb: generictest.Added, Key: "/mine"}},
	}, {
		name:     "an informer's field selector",
		informer: []generic.InformerOption{generic.WithFieldSelector("metadata.name=mine")},
		change: func(f *generictest.Fake, inShard, _ string) {
			f.Create(newWidget(inShard, "other", 1, nil))
			f.Create(newWidget(inShard, "mine", 1, nil))
		},
		want: []generictest.Event{{Verb: generictest.Added, Key: "/mine"}},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			inShard, outShard := namespacesOfShard(t)
			fake := generictest.New(t, widget.NewScheme(), generictest.Timeout(10*time.Second),
				generictest.FactoryOptions(tc.factory...))
			// Two informers of one resource: one unfiltered but for the
			// factory's options, one with the case's own.
			all := generictest.NewInformer[*widget.Widget](fake)
			selected := generictest.NewInformer[*widget.Widget](fake, tc.informer...)
			recorders := []*generictest.Recorder[*widget.Widget]{generictest.NewRecorder[*widget.Widget](), generictest.NewRecorder[*widget.Widget]()}
			for i, informer := range []*generictest.Informer[*widget.Widget]{all, selected} {
				if _, err := informer.AddEventHandler(recorders[i]); err != nil {
					t.Fatal(err)
				}
			}
			tc.change(fake, inShard, outShard)
			want := withNamespace(tc.want, inShard)
			if diff := cmp.Diff(want, recorders[1].Events(), generictest.IgnoreResourceVersion(), generictest.IgnoreOrder()); diff != "" {
				t.Errorf("events of the informer with the case's options (-want +got):\n%s", diff)
			}
			if len(tc.informer) > 0 && len(recorders[0].Events()) <= len(want) {
				t.Errorf("the informer without them saw %v, want more than %v", recorders[0].Events(), want)
			}
			if errs := fake.Errors(); len(errs) > 0 {
				t.Errorf("errors reported: %v", errs)
			}
		})
	}
}

// withNamespace puts the events' keys, written "/name", in namespace.
func withNamespace(events []generictest.Event, namespace string) []generictest.Event {
	var out []generictest.Event
	for _, e := range events {
		e.Key = namespace + e.Key
		out = append(out, e)
	}
	return out
}
