package generic_test

import (
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clienttesting "k8s.io/client-go/testing"

	"github.com/generic-informers/generic"
)

// TestSelectorsNormalised: selectors that select the same, written in
// another order or form, name one informer, which lists and watches once
// with the selector in one form; they made two informers and two watches.
func TestSelectorsNormalised(t *testing.T) {
	tests := []struct {
		name          string
		first, second generic.InformerOption
		wantShared    bool
		// wantSent is the selector of the first informer's list.
		wantSent string
	}{
		{name: "labels in another order", first: generic.WithLabelSelector("a=1,b=2"), second: generic.WithLabelSelector("b=2,a=1"),
			wantShared: true, wantSent: "a=1,b=2"},
		{name: "labels with spaces and ==", first: generic.WithLabelSelector("b=2,a=1"), second: generic.WithLabelSelector(" a == 1 , b=2"),
			wantShared: true, wantSent: "a=1,b=2"},
		{name: "set values in another order", first: generic.WithLabelSelector("tier in (web,db),!beta"), second: generic.WithLabelSelector("!beta,tier in (db,web)"),
			wantShared: true, wantSent: "!beta,tier in (db,web)"},
		{name: "a label requirement twice", first: generic.WithLabelSelector("a=1,a=1"), second: generic.WithLabelSelector("a=1"),
			wantShared: true, wantSent: "a=1"},
		{name: "other labels", first: generic.WithLabelSelector("a=1"), second: generic.WithLabelSelector("a=2"),
			wantSent: "a=1"},
		{name: "fields in another order", first: generic.WithFieldSelector("metadata.namespace=team-a,metadata.name=flags"),
			second: generic.WithFieldSelector("metadata.name==flags,metadata.namespace=team-a"), wantShared: true,
			wantSent: "metadata.name=flags,metadata.namespace=team-a"},
		{name: "other fields", first: generic.WithFieldSelector("metadata.name=flags"), second: generic.WithFieldSelector("metadata.name!=flags"),
			wantSent: "metadata.name=flags"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			client := newDynamicClient(t, "testdata/configmaps.yaml")
			var lists atomic.Int32
			var sent atomic.Value
			client.PrependReactor("list", "configmaps", func(action clienttesting.Action) (bool, runtime.Object, error) {
				if lists.Add(1) == 1 {
					restrictions := action.(clienttesting.ListAction).GetListRestrictions()
					sent.Store(restrictions.Labels.String() + restrictions.Fields.String())
				}
				return false, nil, nil
			})
			factory := newFactory[*unstructured.Unstructured](generic.DynamicSource(client), nil)
			defer factory.Shutdown()
			ctx, cancel := testContext(t)
			defer cancel()
			first := acquire(factory, configMapsGVR, tc.first)
			second := acquire(factory, configMapsGVR, tc.second)
			if diff := cmp.Diff(tc.wantShared, first.Informer() == second.Informer()); diff != "" {
				t.Errorf("one informer (-want +got):\n%s", diff)
			}
			factory.Start(ctx)
			if err := factory.WaitForCacheSync(ctx).AsError(); err != nil {
				t.Fatal(err)
			}
			wantLists := int32(2)
			if tc.wantShared {
				wantLists = 1
			}
			if diff := cmp.Diff(wantLists, lists.Load()); diff != "" {
				t.Errorf("lists (-want +got):\n%s", diff)
			}
			if tc.wantShared {
				if diff := cmp.Diff(tc.wantSent, sent.Load()); diff != "" {
					t.Errorf("the selector sent (-want +got):\n%s", diff)
				}
			}
		})
	}
}

// TestInvalidSelectorsRefused: a selector that does not parse is still an
// error where it is given, and nothing is acquired.
func TestInvalidSelectorsRefused(t *testing.T) {
	tests := []struct {
		name string
		opt  generic.InformerOption
	}{
		{name: "labels", opt: generic.WithLabelSelector("a in (")},
		{name: "fields", opt: generic.WithFieldSelector("metadata.name")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			factory := newFactory[*unstructured.Unstructured](generic.DynamicSource(newDynamicClient(t)), nil)
			defer factory.Shutdown()
			if _, err := factory.Acquire(configMapsGVR, tc.opt); err == nil {
				t.Error("an invalid selector was acquired")
			}
			if diff := cmp.Diff(0, len(factory.Statuses())); diff != "" {
				t.Errorf("informers made (-want +got):\n%s", diff)
			}
		})
	}
}
