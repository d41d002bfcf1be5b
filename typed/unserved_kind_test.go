package typed_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/internal/widget"
	"github.com/generic-informers/generic/typed"
)

// TestInformerForBeforeTheCRD is defect 3: InformerFor of a CRD's Go type
// whose CRD was not installed yet failed at once (discovery of its group
// version found nothing), unless the caller named the resource. It must
// return an informer that is NotServed, asks again with backoff, and syncs
// once the kind is served; later calls share it. (The e2e test
// TestNotServedBeforeFirstSyncRecovers does the same against a real API
// server and a real CRD.)
func TestInformerForBeforeTheCRD(t *testing.T) {
	factory, mapper := newForgetfulFactory(t)
	mapper.forget() // the CRD is not installed
	widgets, err := typed.InformerFor[*widget.Widget](factory)
	if err != nil {
		t.Fatalf("InformerFor before the CRD: %v", err)
	}
	if diff := cmp.Diff(widget.GVR, widgets.GroupVersionResource()); diff != "" {
		t.Errorf("resource guessed from the kind (-want +got):\n%s", diff)
	}
	factory.Start(t.Context())
	waitForState(t, widgets, generic.NotServed)

	mapper.remember() // the CRD is installed
	waitForState(t, widgets, generic.Synced)
	all, err := widgets.Lister().List(labels.Everything())
	check(t, err)
	if diff := cmp.Diff([]string{"team-a/large", "team-a/small", "team-b/small"}, names(all)); diff != "" {
		t.Errorf("cached once served (-want +got):\n%s", diff)
	}
	again, err := typed.InformerFor[*widget.Widget](factory)
	check(t, err)
	if again.Informer() != widgets.Informer() {
		t.Error("a later InformerFor made another informer")
	}
}

// waitForState waits, bounded, until informer's State is want.
func waitForState(t *testing.T, informer interface{ Status() generic.Status }, want generic.State) {
	t.Helper()
	err := wait.PollUntilContextTimeout(t.Context(), 10*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		return informer.Status().State == want, nil
	})
	if err != nil {
		t.Fatalf("the informer is %v, not %v: %v", informer.Status().State, want, informer.Status().LastError)
	}
}
