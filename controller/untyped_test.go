package controller_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"

	"github.com/generic-informers/generic/controller"
	"github.com/generic-informers/generic/generictest"
	"github.com/generic-informers/generic/internal/widget"
)

// TestUntypedPrimaries: the same loop over *unstructured.Unstructured
// primaries by GVR, and metadata-only ones.
func TestUntypedPrimaries(t *testing.T) {
	tests := []struct {
		name string
		// primary makes the controller's primary over the Fake.
		primary func(f *generictest.Fake) controller.Primary
	}{{
		name: "unstructured",
		primary: func(f *generictest.Fake) controller.Primary {
			return controller.For(generictest.NewUnstructuredInformer(f, widget.GVR), controller.GenerationChanged[*unstructured.Unstructured])
		},
	}, {
		name: "metadata only",
		primary: func(f *generictest.Fake) controller.Primary {
			return controller.For(generictest.NewMetadataInformer(f, widget.GVR), controller.GenerationChanged[*metav1.PartialObjectMetadata])
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fake := newFake(t)
			var got calls
			c, err := controller.New("untyped", tc.primary(fake), func(_ context.Context, key cache.ObjectName) (controller.Result, error) {
				got.add(key)
				return controller.Result{}, nil
			})
			if err != nil {
				t.Fatal(err)
			}
			run(t, c)
			fake.WaitIdle(c)
			want := []string{"team-a/large", "team-a/small", "team-b/small"}
			if diff := cmp.Diff(want, got.take()); diff != "" {
				t.Errorf("seeded keys reconciled (-want +got):\n%s", diff)
			}
			// A status-only change is no new generation; a spec change is.
			fake.UpdateStatus(&widget.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "large"}, Status: widget.Status{Ready: true}})
			fake.Update(&widget.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: "team-b", Name: "small"}, Spec: widget.Spec{Size: 7}})
			fake.WaitIdle(c)
			if diff := cmp.Diff([]string{"team-b/small"}, got.take()); diff != "" {
				t.Errorf("keys reconciled after the changes (-want +got):\n%s", diff)
			}
		})
	}
}
