package bench

import (
	"context"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	crcontroller "sigs.k8s.io/controller-runtime/pkg/controller"
	crlog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/controller"
	"github.com/generic-informers/generic/typed"
)

// reconcileNamespace holds the primaries of BenchmarkReconcile, and only
// them: both contenders' caches are scoped to it.
const reconcileNamespace = "bench-reconcile"

// reconcileWorkers is both contenders' number of concurrent reconciles
// (controller.WithWorkers, controller-runtime's MaxConcurrentReconciles).
const reconcileWorkers = 2

var (
	reconcileSeedOnce sync.Once
	reconcileSeedErr  error
	reconcileWarmOnce sync.Once
)

// reconcileServer returns the embedded server holding `objects` small
// ConfigMaps (a label and a one-key data map) in reconcileNamespace.
func reconcileServer(b *testing.B) *rest.Config {
	b.Helper()
	s := sharedServer(b)
	reconcileSeedOnce.Do(func() { reconcileSeedErr = seedPrimaries(s.Config) })
	if reconcileSeedErr != nil {
		b.Fatal(reconcileSeedErr)
	}
	return s.Config
}

func seedPrimaries(config *rest.Config) error {
	ctx := context.Background()
	client, err := kubernetes.NewForConfig(config)
	if err != nil {
		return err
	}
	_, err = client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: reconcileNamespace}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	cms := client.CoreV1().ConfigMaps(reconcileNamespace)
	return createConcurrently(objects, func(i int) error {
		_, err := cms.Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: "primary-" + strconv.Itoa(i), Labels: map[string]string{"app": "app-" + strconv.Itoa(i%10)}},
			Data:       map[string]string{"index": strconv.Itoa(i)},
		}, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			return nil
		}
		return err
	})
}

// reconcileRun builds and starts a controller whose Reconciler is
// reconcile, and returns how to stop it and wait until it has shut down.
type reconcileRun func(b *testing.B, config *rest.Config, onReconcile func()) (stop func())

// genericReconcileRun is this library's controller: a typed factory of the
// namespace, its ConfigMap informer as the primary, default options but the
// workers.
func genericReconcileRun(b *testing.B, config *rest.Config, onReconcile func()) func() {
	factory, err := typed.NewFactory(config, clientgoscheme.Scheme, generic.WithNamespace(reconcileNamespace))
	if err != nil {
		b.Fatal(err)
	}
	configMaps, err := typed.InformerFor[*corev1.ConfigMap](factory)
	if err != nil {
		b.Fatal(err)
	}
	c, err := controller.New("bench-reconcile", controller.For(configMaps),
		func(context.Context, toolscache.ObjectName) (controller.Result, error) {
			onReconcile()
			return controller.Result{}, nil
		}, controller.WithWorkers(reconcileWorkers))
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	factory.Start(ctx)
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	return func() {
		cancel()
		if err := <-done; err != nil {
			b.Error(err)
		}
		factory.Shutdown()
	}
}

// controllerRuntimeReconcileRun is controller-runtime's controller as its
// users build it: a manager (no metrics server, health probes or leader
// election; its cache scoped to the namespace) and
// builder.ControllerManagedBy(mgr).For(&corev1.ConfigMap{}), defaults but
// MaxConcurrentReconciles (and SkipNameValidation, for a new controller per
// iteration).
func controllerRuntimeReconcileRun(b *testing.B, config *rest.Config, onReconcile func()) func() {
	mgr, err := manager.New(config, manager.Options{
		Scheme:                 clientgoscheme.Scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		LeaderElection:         false,
		Cache:                  crcache.Options{DefaultNamespaces: map[string]crcache.Config{reconcileNamespace: {}}},
	})
	if err != nil {
		b.Fatal(err)
	}
	err = builder.ControllerManagedBy(mgr).For(&corev1.ConfigMap{}).
		WithOptions(crcontroller.Options{MaxConcurrentReconciles: reconcileWorkers, SkipNameValidation: ptr.To(true)}).
		Complete(reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) {
			onReconcile()
			return reconcile.Result{}, nil
		}))
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	return func() {
		cancel()
		if err := <-done; err != nil {
			b.Error(err)
		}
	}
}

var reconcileContenders = []struct {
	name string
	run  reconcileRun
}{
	{"generic", genericReconcileRun},
	{"controller-runtime", controllerRuntimeReconcileRun},
}

// BenchmarkReconcile measures reconcile throughput against the embedded
// API server: `objects` ConfigMaps (small ones, in a namespace of their
// own) are the primaries of a controller with a Reconciler that only
// counts, and 2 workers. One op is a fresh factory (manager) and
// controller, from construction until every key has been reconciled once;
// then it is stopped, and its shutdown waited for, off the clock. It
// reports reconciles/s over the whole op and first-ns/op, the time from
// construction to the first reconcile (the list and the handlers' sync,
// before the workers start); drain-reconciles/s is the throughput after it.
//
// contender=generic is this library's controller (package controller over
// a typed factory); contender=controller-runtime its manager and builder.
// They run one after the other, and go test runs the -count runs of a
// sub-benchmark in a row: a slow or fast spell of the machine can fall on
// one contender's runs and not the other's.
func BenchmarkReconcile(b *testing.B) {
	config := reconcileServer(b)
	// controller-runtime logs through klog, as this library does, which
	// discards here (quietKlog); without a logger set, it warns.
	crlog.SetLogger(klog.Background())
	reconcileWarmOnce.Do(func() {
		// Once per process, unmeasured, so that the API server has the
		// objects' encodings (protobuf and JSON) cached.
		for _, c := range reconcileContenders {
			measureReconcile(b, config, c.run)
		}
	})
	for _, c := range reconcileContenders {
		b.Run("contender="+c.name, func(b *testing.B) {
			var total, first time.Duration
			b.ReportAllocs()
			for b.Loop() {
				b.StopTimer()
				runtime.GC()
				b.StartTimer()
				t, f := measureReconcile(b, config, c.run)
				total += t
				first += f
			}
			b.ReportMetric(float64(b.N*objects)/total.Seconds(), "reconciles/s")
			b.ReportMetric(float64(first.Nanoseconds())/float64(b.N), "first-ns/op")
			b.ReportMetric(float64(b.N*objects)/(total-first).Seconds(), "drain-reconciles/s")
		})
	}
}

// measureReconcile runs one controller until every key has been reconciled
// once, with b's timer running, then stops it off the clock. It returns
// the time to the last reconcile and to the first. It fails if a key was
// reconciled twice (a count of `objects` would then not mean every key).
func measureReconcile(b *testing.B, config *rest.Config, run reconcileRun) (total, first time.Duration) {
	var count atomic.Int64
	var firstAt atomic.Int64 // ns since started
	all := make(chan struct{})
	started := time.Now()
	stop := run(b, config, func() {
		n := count.Add(1)
		if n == 1 {
			firstAt.Store(int64(time.Since(started)))
		}
		if n == int64(objects) {
			close(all)
		}
	})
	select {
	case <-all:
	case <-time.After(5 * time.Minute):
		b.Fatalf("%d of %d keys reconciled in 5 minutes", count.Load(), objects)
	}
	total = time.Since(started)
	b.StopTimer()
	defer b.StartTimer()
	stop()
	if n := count.Load(); n != int64(objects) {
		b.Fatalf("%d reconciles of %d keys: a key was reconciled more than once", n, objects)
	}
	return total, time.Duration(firstAt.Load())
}
