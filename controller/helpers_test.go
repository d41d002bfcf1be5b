package controller_test

import (
	"context"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/generic-informers/generic/controller"
	"github.com/generic-informers/generic/generictest"
	"github.com/generic-informers/generic/internal/widget"
)

func fixture(name string) string { return filepath.Join("..", "testdata", name) }

// newFake is a Fake seeded with testdata/widgets.yaml and objs.
func newFake(t *testing.T, opts ...generictest.Option) *generictest.Fake {
	return generictest.New(t, widget.NewScheme(), append([]generictest.Option{
		generictest.Files(fixture("crds/widgets.example.com.yaml"), fixture("widgets.yaml"))}, opts...)...)
}

func configMap(namespace, name string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
}

// calls records the keys a Reconciler was called with.
type calls struct {
	mu   sync.Mutex
	keys []string
}

func (c *calls) add(key cache.ObjectName) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.keys = append(c.keys, key.String())
	n := 0
	for _, k := range c.keys {
		if k == key.String() {
			n++
		}
	}
	return n
}

// sorted returns the keys called so far, sorted, and forgets them.
func (c *calls) take() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	keys := slices.Sorted(slices.Values(c.keys))
	c.keys = nil
	return keys
}

// fastRetries retries after 1 ms, doubling to 10 ms: tests do not wait for
// the default's backoff.
func fastRetries() controller.Option {
	return controller.WithRateLimiter(workqueue.NewTypedItemExponentialFailureRateLimiter[cache.ObjectName](time.Millisecond, 10*time.Millisecond))
}

// run runs c for the test's length and checks that Run returns nil.
func run(t *testing.T, c *controller.Controller) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var err error
	wg.Go(func() { err = c.Run(ctx) })
	t.Cleanup(func() {
		cancel()
		wg.Wait()
		if err != nil {
			t.Errorf("Run: %v", err)
		}
	})
}

// requeueNow is the deprecated Result.Requeue, which still works: the key
// is reconciled again after the rate limiter's delay (none, or 1 ms, in
// these tests) and, unlike a key waiting for its RequeueAfter, is work
// that WaitIdle waits for until then. The tests that race a reconcile
// against its own write's watch event need both.
func requeueNow() controller.Result {
	return controller.Result{Requeue: true}
}
