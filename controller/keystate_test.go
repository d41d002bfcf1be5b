package controller_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/controller"
	"github.com/generic-informers/generic/generictest"
)

// TestKeyRecordsReleased: once a key is done (reconciled with success, its
// object deleted and that delete reconciled), the controller holds nothing
// of it, whatever path the key took: many distinct keys cost no memory
// once done.
func TestKeyRecordsReleased(t *testing.T) {
	const keys = 20
	tests := []struct {
		name string
		// first is the first result of each key's reconciles; later ones
		// succeed.
		first func() (controller.Result, error)
		// member gives the factory a membership of one replica: the
		// controller then records each key's last known primary and its
		// reconcile in progress.
		member bool
	}{
		{name: "success", first: func() (controller.Result, error) { return controller.Result{}, nil }},
		{name: "error then success", first: func() (controller.Result, error) { return controller.Result{}, errors.New("boom") }},
		{name: "requeue then success", first: func() (controller.Result, error) { return requeueNow(), nil }},
		{name: "member, success", first: func() (controller.Result, error) { return controller.Result{}, nil }, member: true},
		{name: "member, error then success", first: func() (controller.Result, error) { return controller.Result{}, errors.New("boom") }, member: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var opts []generictest.Option
			if tc.member {
				opts = append(opts, generictest.FactoryOptions(generic.WithMembership(soleMember())))
			}
			fake := newFake(t, opts...)
			cms := generictest.NewInformer[*corev1.ConfigMap](fake)
			var got calls
			c, err := controller.New("records", controller.For(cms), func(_ context.Context, key cache.ObjectName) (controller.Result, error) {
				if got.add(key) == 1 {
					return tc.first()
				}
				return controller.Result{}, nil
			}, fastRetries(), controller.WithReconcileErrorHandler(func(context.Context, error) {}))
			if err != nil {
				t.Fatal(err)
			}
			if tc.member {
				// Owned before Run: no change of ownership races the
				// keys below.
				waitOwnsAll(t, cms)
			}
			run(t, c)
			fake.WaitIdle(c)
			var made []*corev1.ConfigMap
			for i := range keys {
				cm := configMap("records", fmt.Sprintf("cm-%d", i))
				fake.Create(cm)
				made = append(made, cm)
			}
			fake.WaitIdle(c)
			if n := len(slices.Compact(got.take())); n != keys {
				t.Errorf("%d distinct keys reconciled, want %d", n, keys)
			}
			if n := controller.Records(c); n != 0 {
				t.Errorf("after %d keys reconciled: %d records held, want 0", keys, n)
			}
			for _, cm := range made {
				fake.Delete(cm)
			}
			fake.WaitIdle(c)
			if n := controller.Records(c); n != 0 {
				t.Errorf("after %d keys deleted and reconciled: %d records held, want 0", keys, n)
			}
		})
	}
}

// soleMember is a membership of one replica, which owns every object once
// it has joined; its timings are long enough for -race on a loaded
// machine.
func soleMember() *generic.Member {
	member, err := generic.NewMember(generic.Membership{Leases: kubefake.NewClientset().CoordinationV1().Leases("leases"), Group: "g", Identity: "only",
		RetryPeriod: 20 * time.Millisecond, RenewDeadline: 10 * time.Second, LeaseDuration: 20 * time.Second, LeaveTimeout: time.Second})
	if err != nil {
		panic(err) // a valid Membership
	}
	return member
}

// waitOwnsAll waits until the replica owns every object of informer.
func waitOwnsAll[T generic.Object](t *testing.T, informer generic.Informer[T]) {
	t.Helper()
	timeout := time.After(generictest.DefaultTimeout)
	for {
		o := informer.Ownership()
		if o.String() == "shardRange(object.metadata.uid, '0x0000000000000000', '0x10000000000000000')" {
			return
		}
		select {
		case <-o.Changed:
		case <-timeout:
			t.Fatalf("the sole member owns %s, not every object", o)
		}
	}
}
