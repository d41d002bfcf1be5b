package generic_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/generic-informers/generic"
)

// TestReleaseAndRemoveResource: the one way to end a hold is its
// Release, the one way to end a resource whatever its holds is
// Registry.RemoveResource, and a Handle's Done says when the informer it
// held has ended.
func TestReleaseAndRemoveResource(t *testing.T) {
	podsGVR := schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	tests := []struct {
		name string
		// end ends holds its own way.
		end      func(r *generic.Registry, handles []generic.Handle[*unstructured.Unstructured])
		wantDone []bool
		// wantReleased is what each handle's Release says afterwards:
		// false for a hold released or removed already.
		wantReleased []bool
	}{
		{
			name: "one Release of two holds ends nothing",
			end: func(_ *generic.Registry, h []generic.Handle[*unstructured.Unstructured]) {
				h[0].Release()
			},
			wantDone: []bool{false, false, false}, wantReleased: []bool{false, true, true},
		},
		{
			name: "the last Release ends the informer",
			end: func(_ *generic.Registry, h []generic.Handle[*unstructured.Unstructured]) {
				h[0].Release()
				h[1].Release()
			},
			wantDone: []bool{true, true, false}, wantReleased: []bool{false, false, true},
		},
		{
			name: "RemoveResource ends every selection of the resource, whatever its holds",
			end: func(r *generic.Registry, _ []generic.Handle[*unstructured.Unstructured]) {
				<-r.RemoveResource(configMapsGVR)
			},
			wantDone: []bool{true, true, false}, wantReleased: []bool{false, false, true},
		},
		{
			name: "Shutdown ends them all",
			end: func(r *generic.Registry, _ []generic.Handle[*unstructured.Unstructured]) {
				r.Shutdown()
			},
			wantDone: []bool{true, true, true}, wantReleased: []bool{false, true, true},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			client := newDynamicClient(t, "testdata/configmaps.yaml")
			factory := newFactory[*unstructured.Unstructured](generic.DynamicSource(client), nil)
			defer factory.Shutdown()
			ctx, cancel := testContext(t)
			defer cancel()
			handles := []generic.Handle[*unstructured.Unstructured]{
				acquire(factory, configMapsGVR),
				acquire(factory, configMapsGVR), // the same informer, held twice
				acquire(factory, podsGVR),
			}
			other := acquire(factory, configMapsGVR, generic.WithNamespace("team-a"))
			factory.Start(ctx)
			if err := factory.WaitForCacheSync(ctx).AsError(); err != nil {
				t.Fatal(err)
			}
			tc.end(factory.Registry, handles)
			var done []bool
			for _, h := range handles {
				done = append(done, isDone(ctx, h, tc.wantDone[len(done)]))
			}
			if diff := cmp.Diff(tc.wantDone, done); diff != "" {
				t.Errorf("done (-want +got):\n%s", diff)
			}
			if tc.name == "RemoveResource ends every selection of the resource, whatever its holds" {
				if !isDone(ctx, other, true) {
					t.Error("the other selection of the resource is not done")
				}
				fresh := acquire(factory, configMapsGVR)
				if fresh.Informer() == handles[0].Informer() {
					t.Error("an Acquire after RemoveResource got the removed informer")
				}
			}
			var released []bool
			for _, h := range handles {
				released = append(released, h.Release())
			}
			if diff := cmp.Diff(tc.wantReleased, released); diff != "" {
				t.Errorf("Release afterwards (-want +got):\n%s", diff)
			}
		})
	}
}

// isDone reports whether h's Done is closed: it waits for it (bounded by
// ctx) where it is expected, and looks once where it is not, so that a
// slow machine cannot make it fail.
func isDone[T generic.Object](ctx context.Context, h generic.Handle[T], expected bool) bool {
	if !expected {
		select {
		case <-h.Done():
			return true
		default:
			return false
		}
	}
	select {
	case <-h.Done():
		return true
	case <-ctx.Done():
		return false
	}
}

// TestDoneOfAnInformerNeverStarted: an informer acquired and released
// before Start is done as it leaves the Registry, and one acquired after
// Shutdown, which nothing will start, is done at once.
func TestDoneOfAnInformerNeverStarted(t *testing.T) {
	ctx, cancel := testContext(t)
	defer cancel()
	factory := newFactory[*unstructured.Unstructured](generic.DynamicSource(newDynamicClient(t)), nil)
	released := acquire(factory, configMapsGVR)
	released.Release()
	factory.Shutdown()
	late := acquire(factory, configMapsGVR)
	for name, h := range map[string]generic.Handle[*unstructured.Unstructured]{"released before Start": released, "acquired after Shutdown": late} {
		if !isDone(ctx, h, true) {
			t.Errorf("%s: not done", name)
		}
	}
}
