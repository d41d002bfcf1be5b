package generic_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clienttesting "k8s.io/client-go/testing"

	"github.com/generic-informers/generic"
)

// TestWaitForCacheSyncReportsEachInformer: WaitForCacheSync says, as
// client-go v0.38's cache.GVRSyncResult does, whether each resource synced,
// and besides which informer (selection) of a resource did and which did
// not, so that a caller need not rebuild it from the *SyncError.
func TestWaitForCacheSyncReportsEachInformer(t *testing.T) {
	client := newDynamicClient(t, "testdata/configmaps.yaml", "testdata/pods.yaml")
	client.PrependReactor("list", "configmaps", func(action clienttesting.Action) (bool, runtime.Object, error) {
		if action.(clienttesting.ListAction).GetListRestrictions().Labels.String() == "app=locked" {
			return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"}, "", errors.New("RBAC"))
		}
		return false, nil, nil
	})
	factory := newFactory[*unstructured.Unstructured](generic.DynamicSource(client), nil)
	defer factory.Shutdown()
	podsGVR := schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	teamA := acquire(factory, configMapsGVR, generic.WithNamespace("team-a"))
	locked := acquire(factory, configMapsGVR, generic.WithLabelSelector("app=locked"))
	pods := acquire(factory, podsGVR)
	factory.Start(context.Background())
	// Bounded only to end the wait: first let the locked informer fail
	// its list and the others sync, however loaded the machine, so that
	// the bound decides nothing but when the wait gives up on the locked
	// one.
	waitUntil(t, "the locked selection is Forbidden", func() bool { return locked.Status().State == generic.Forbidden })
	waitUntil(t, "the other informers synced", func() bool { return teamA.HasSynced() && pods.HasSynced() })
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()

	result := factory.WaitForCacheSync(ctx)

	if diff := cmp.Diff(map[schema.GroupVersionResource]bool{configMapsGVR: false, podsGVR: true}, result.Synced); diff != "" {
		t.Errorf("Synced (-want +got):\n%s", diff)
	}
	type informerSync struct {
		Selection generic.Selection
		Synced    bool
		State     generic.State
	}
	var got []informerSync
	for _, i := range result.Informers {
		got = append(got, informerSync{Selection: i.Selection, Synced: i.Synced, State: i.Status.State})
	}
	typ := "*unstructured.Unstructured"
	want := []informerSync{
		{Selection: generic.Selection{GVR: configMapsGVR, Type: typ, LabelSelector: "app=locked"}, Synced: false, State: generic.Forbidden},
		{Selection: generic.Selection{GVR: configMapsGVR, Type: typ, Namespace: "team-a"}, Synced: true, State: generic.Synced},
		{Selection: generic.Selection{GVR: podsGVR, Type: typ}, Synced: true, State: generic.Synced},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Informers (-want +got):\n%s", diff)
	}
	var syncErr *generic.SyncError
	if !errors.As(result.AsError(), &syncErr) || !errors.Is(result.Err, context.DeadlineExceeded) || !apierrors.IsForbidden(result.Err) {
		t.Errorf("AsError() = %v, want a *SyncError wrapping the deadline and the Forbidden error", result.AsError())
	}
}
