package main

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/ctrlcache"
)

// replica is one replica of the example, run by the test: its manager,
// started until the test ends or kill.
type replica struct {
	id  string
	mgr manager.Manager
	// ownership is what the replica owns of the primaries now, as its
	// controller's ctrlcache.Owned reads it.
	ownership func() generic.Ownership
	// cut, once set, fails the replica's every request.
	cut     atomic.Bool
	cancel  context.CancelFunc
	stopped chan struct{}
}

// startReplica starts replica id of the group, with its Leases and
// primaries in ns, its reconciles recorded by rec.
func startReplica(t *testing.T, cfg *rest.Config, ns, id string, rec *recorder) *replica {
	t.Helper()
	r := &replica{id: id, stopped: make(chan struct{})}
	membership := timings
	membership.Group, membership.Identity = "ctrlsharded", id
	mgr, err := NewManager(cutConfig(cfg, &r.cut), Options{Membership: membership, LeaseNamespace: ns, Namespace: ns, OnReconcile: rec.record})
	if err != nil {
		t.Fatal(err)
	}
	informer, err := mgr.GetCache().GetInformer(context.Background(), &corev1.ConfigMap{}, cache.BlockUntilSynced(false))
	if err != nil {
		t.Fatal(err)
	}
	r.mgr, r.ownership = mgr, informer.(interface{ Ownership() generic.Ownership }).Ownership
	rec.addReplica(r)
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	go func() {
		defer close(r.stopped)
		if err := mgr.Start(ctx); err != nil {
			t.Errorf("replica %s: manager Start: %v", id, err)
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-r.stopped
	})
	return r
}

// membership is where the replica stands in its membership.
func (r *replica) membership() generic.MembershipStatus {
	registry, _ := ctrlcache.RegistryOf(r.mgr.GetCache())
	status, _ := registry.Membership()
	return status
}

// kill cuts the replica off from the API server, then cancels its
// manager's context: it stops, and cannot tell the others it leaves.
func (r *replica) kill() {
	r.cut.Store(true)
	r.cancel()
}

// waitStopped waits for the replica's manager to return.
func (r *replica) waitStopped(t *testing.T) {
	t.Helper()
	select {
	case <-r.stopped:
	case <-time.After(2 * time.Minute):
		t.Fatalf("replica %s: the manager has not returned 2 minutes after its context ended", r.id)
	}
}
