package controller_test

import (
	"context"
	"strconv"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/controller"
	"github.com/generic-informers/generic/generictest"
	"github.com/generic-informers/generic/internal/widget"
	"github.com/generic-informers/generic/typed"
)

// TestReadsOwnWrites: a reconcile that increments a counter in its
// primary through typed.Client, and asks to be requeued at once, never
// reads a count older than its own last write, and never meets a conflict
// (which a stale read would cause), through 200 write→reconcile cycles.
func TestReadsOwnWrites(t *testing.T) {
	const cycles = 200
	tests := []struct {
		name string
		// selector is the primary informer's label selector.
		selector string
		// label is set on the counter's ConfigMap at each write.
		label map[string]string
	}{
		{name: "every write in the informer's selection"},
		{name: "the last write leaves the selection", selector: "counted=yes", label: map[string]string{"counted": "yes"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cm := configMap("team-a", "counter")
			cm.Labels = tc.label
			fake := newFake(t, generictest.Objects(cm))
			var opts []generic.InformerOption
			if tc.selector != "" {
				opts = append(opts, generic.WithLabelSelector(tc.selector))
			}
			cms := generictest.NewInformer[*corev1.ConfigMap](fake, opts...)
			client, err := typed.ClientFor[*corev1.ConfigMap](fake.Factory())
			if err != nil {
				t.Fatal(err)
			}
			var mu sync.Mutex
			written, stale, conflicts := 0, 0, 0
			reconcile := func(ctx context.Context, key cache.ObjectName) (controller.Result, error) {
				cached, err := cms.Lister().Namespace(key.Namespace).Get(key.Name)
				if err != nil {
					return controller.Result{}, nil // out of the selection: done
				}
				count, _ := strconv.Atoi(cached.Data["count"])
				mu.Lock()
				defer mu.Unlock()
				if count < written {
					stale++
				}
				if count >= cycles {
					return controller.Result{}, nil
				}
				next := cached.DeepCopy()
				next.Data = map[string]string{"count": strconv.Itoa(count + 1)}
				if count+1 == cycles && tc.label != nil {
					next.Labels = nil // the last write takes it out of the selection
				}
				if _, err := client.Update(ctx, next, metav1.UpdateOptions{}); err != nil {
					if apierrors.IsConflict(err) {
						conflicts++
					}
					return controller.Result{}, err
				}
				written = count + 1
				return requeueNow(), nil
			}
			c, err := controller.New("counter", controller.For(cms), reconcile, fastRetries())
			if err != nil {
				t.Fatal(err)
			}
			run(t, c)
			fake.WaitIdle(c)
			mu.Lock()
			defer mu.Unlock()
			type outcome struct{ Written, Stale, Conflicts int }
			if diff := cmp.Diff(outcome{Written: cycles}, outcome{written, stale, conflicts}); diff != "" {
				t.Errorf("cycles (-want +got):\n%s", diff)
			}
		})
	}
}

// TestReadsOwnDeletes: a reconcile that creates and deletes a secondary
// object in turn, requeued at once, always finds the cache as its last
// write left it: present after its create, gone after its delete.
func TestReadsOwnDeletes(t *testing.T) {
	const cycles = 100
	fake := newFake(t)
	widgets := generictest.NewInformer[*widget.Widget](fake, generic.WithFieldSelector("metadata.name=large"))
	cms := generictest.NewInformer[*corev1.ConfigMap](fake)
	client, err := typed.ClientFor[*corev1.ConfigMap](fake.Factory())
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	done, stale := 0, 0
	reconcile := func(ctx context.Context, key cache.ObjectName) (controller.Result, error) {
		mu.Lock()
		defer mu.Unlock()
		if done == cycles {
			return controller.Result{}, nil
		}
		_, err := cms.Lister().Namespace(key.Namespace).Get("turn")
		if present, want := err == nil, done%2 == 1; present != want {
			stale++
		}
		if done%2 == 0 {
			_, err = client.Create(ctx, configMap(key.Namespace, "turn"), metav1.CreateOptions{})
		} else {
			err = client.Delete(ctx, cache.ObjectName{Namespace: key.Namespace, Name: "turn"}, metav1.DeleteOptions{})
		}
		if err != nil {
			return controller.Result{}, err
		}
		done++
		return requeueNow(), nil
	}
	// Requeued with no delay: the next reconcile races the watch.
	noDelay := controller.WithRateLimiter(workqueue.NewTypedItemExponentialFailureRateLimiter[cache.ObjectName](0, 0))
	c, err := controller.New("turns", controller.For(widgets), reconcile, noDelay,
		controller.Watches(cms, func(*corev1.ConfigMap) []cache.ObjectName { return nil }))
	if err != nil {
		t.Fatal(err)
	}
	run(t, c)
	fake.WaitIdle(c)
	mu.Lock()
	defer mu.Unlock()
	type outcome struct{ Done, Stale int }
	if diff := cmp.Diff(outcome{Done: cycles}, outcome{done, stale}); diff != "" {
		t.Errorf("cycles (-want +got):\n%s", diff)
	}
}
