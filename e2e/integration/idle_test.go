package integration

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/cache"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/controller"
	"github.com/generic-informers/generic/typed"
)

// TestWaitIdleOnTheServer is issue 46's wait on a real API server: a
// controller whose reconcile bumps a step in its ConfigMap and returns,
// each next step woken only by its write's watch event, which reaches the
// informer 20 ms late (laggingWatches). Controller.WaitIdle, called once
// the informer holds the ConfigMaps the test created, returns only once
// every ConfigMap has reached its last step, with one reconcile per step
// and one more that finds it done: between a write and its event the
// controller's queue is empty.
func TestWaitIdleOnTheServer(t *testing.T) {
	const objects, steps = 5, 10
	ctx := testContext(t)
	config := laggingWatches(fastConfig(shared.Config), watchLag)
	client := kubernetes.NewForConfigOrDie(config)
	namespace := generateNamespace(t, client, "wait-idle-")
	factory, err := typed.NewFactory(config, scheme.Scheme, generic.WithNamespace(namespace))
	if err != nil {
		t.Fatal(err)
	}
	defer factory.Shutdown()
	configMaps, err := typed.InformerFor[*corev1.ConfigMap](factory)
	if err != nil {
		t.Fatal(err)
	}
	cms, err := typed.ClientFor[*corev1.ConfigMap](factory)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	reconciles := 0
	reconcile := func(ctx context.Context, key cache.ObjectName) (controller.Result, error) {
		mu.Lock()
		reconciles++
		mu.Unlock()
		cm, err := configMaps.Lister().Namespace(key.Namespace).Get(key.Name)
		if err != nil {
			return controller.Result{}, err
		}
		step, _ := strconv.Atoi(cm.Data["step"])
		if step >= steps {
			return controller.Result{}, nil
		}
		next := cm.DeepCopy()
		next.Data = map[string]string{"step": strconv.Itoa(step + 1)}
		_, err = cms.Update(ctx, next, metav1.UpdateOptions{})
		return controller.Result{}, err
	}
	c, err := controller.New("wait-idle", controller.For(configMaps), reconcile, controller.WithWorkers(2))
	if err != nil {
		t.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	factory.Start(runCtx)
	run := runController(runCtx, c)
	defer func() {
		cancel()
		if err := run.wait(); err != nil {
			t.Errorf("Run: %v", err)
		}
	}()
	for i := range objects {
		created, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: fmt.Sprintf("stepper-%d", i)}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		// The test's own writes: waited for before WaitIdle, which waits
		// only for what the informer has taken in, and the controller's
		// own writes.
		if err := configMaps.WaitForWrite(ctx, created); err != nil {
			t.Fatal(err)
		}
	}
	started := time.Now()
	wait, cancelWait := context.WithTimeout(ctx, controllerBound)
	defer cancelWait()
	if err := c.WaitIdle(wait); err != nil {
		t.Fatal(err)
	}
	t.Logf("idle %v after the creates", time.Since(started).Round(time.Millisecond))
	list, err := client.CoreV1().ConfigMaps(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	want := map[string]string{}
	for i, cm := range list.Items {
		got[cm.Name] = cm.Data["step"]
		want[fmt.Sprintf("stepper-%d", i)] = strconv.Itoa(steps)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("steps on the server when WaitIdle returned (-want +got):\n%s", diff)
	}
	mu.Lock()
	defer mu.Unlock()
	if reconciles != objects*(steps+1) {
		t.Errorf("%d reconciles when WaitIdle returned, want %d (one per step and one that finds it done)", reconciles, objects*(steps+1))
	}
}
