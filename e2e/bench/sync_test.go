package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	apiruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	clientfeatures "k8s.io/client-go/features"
	clientfeaturestesting "k8s.io/client-go/features/testing"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/e2e/internal/cluster"
	"github.com/generic-informers/generic/internal/fixtures"
	"github.com/generic-informers/generic/internal/widget"
	"github.com/generic-informers/generic/typed"
	genericunstructured "github.com/generic-informers/generic/unstructured"
)

var configMapsGVR = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

// syncNamespaces is how many namespaces the synced objects are spread over.
const syncNamespaces = 10

// payload is what makes each synced object about 2 KiB.
var payload = strings.Repeat("generic informers ", 110)

var (
	seedOnce sync.Once
	seedErr  error
	scheme   *apiruntime.Scheme
)

// seededServer returns the embedded server holding `objects` ConfigMaps
// and as many Widgets, of about 2 KiB each, in 10 namespaces.
func seededServer(b *testing.B) (*rest.Config, *cluster.Cluster) {
	b.Helper()
	s := sharedServer(b)
	c, err := cluster.New(s.Config)
	if err != nil {
		b.Fatal(err)
	}
	seedOnce.Do(func() {
		if scheme, seedErr = newScheme(); seedErr != nil {
			return
		}
		seedErr = seed(c)
	})
	if seedErr != nil {
		b.Fatal(seedErr)
	}
	return s.Config, c
}

// newScheme is the scheme of the typed contenders: client-go's and Widgets.
func newScheme() (*apiruntime.Scheme, error) {
	s := apiruntime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		return nil, err
	}
	if err := widget.AddToScheme(s); err != nil {
		return nil, err
	}
	return s, nil
}

// createConcurrently calls create(i) for i in [0, n) from 32 goroutines,
// as the seeds create objects, and returns the first error.
func createConcurrently(n int, create func(i int) error) error {
	var g errgroup.Group
	g.SetLimit(32)
	for i := range n {
		g.Go(func() error { return create(i) })
	}
	return g.Wait()
}

func seed(c *cluster.Cluster) error {
	ctx := context.Background()
	crd, err := fixtures.Load("../../testdata/crds/widgets.example.com.yaml")
	if err != nil {
		return err
	}
	var prelude []*unstructured.Unstructured
	for i := range syncNamespaces {
		prelude = append(prelude, cluster.Namespace("bench-"+strconv.Itoa(i)))
	}
	if err := c.Apply(ctx, append(prelude, crd...)...); err != nil {
		return err
	}
	started := time.Now()
	err = createConcurrently(objects, func(i int) error {
		ns := "bench-" + strconv.Itoa(i%syncNamespaces)
		if _, err := c.Dynamic.Resource(configMapsGVR).Namespace(ns).Create(ctx, syncConfigMap(ns, i), metav1.CreateOptions{}); err != nil {
			return err
		}
		_, err := c.Dynamic.Resource(widget.GVR).Namespace(ns).Create(ctx, syncWidget(ns, i), metav1.CreateOptions{})
		return err
	})
	if err != nil {
		return err
	}
	fmt.Printf("seeded %d ConfigMaps and %d Widgets in %v\n", objects, objects, time.Since(started).Round(time.Millisecond))
	return nil
}

func syncConfigMap(ns string, i int) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"namespace": ns, "name": "cm-" + strconv.Itoa(i), "labels": map[string]any{"app": "app-" + strconv.Itoa(i%10)}},
		"data":     map[string]any{"payload": payload},
	}}
}

func syncWidget(ns string, i int) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"namespace": ns, "name": "widget-" + strconv.Itoa(i),
			"labels": map[string]any{"app": "app-" + strconv.Itoa(i%10)}, "annotations": map[string]any{"example.com/notes": payload}},
		"spec": map[string]any{"size": int64(i % 100), "color": "blue", "configMapName": "cm-" + strconv.Itoa(i)},
	}}
}

// syncer starts one informer of a resource and returns a channel closed
// when it has synced (client-go's HasSyncedChecker: no polling, which would
// round sync times up to 100 ms), and how to stop it.
type syncer func(b *testing.B, ctx context.Context, config *rest.Config, gvr schema.GroupVersionResource) (synced <-chan struct{}, stop func())

// syncedChannel returns informer's HasSyncedChecker channel.
func syncedChannel(b *testing.B, informer any) <-chan struct{} {
	checker, ok := informer.(interface{ HasSyncedChecker() toolscache.DoneChecker })
	if !ok {
		b.Fatalf("%T has no HasSyncedChecker", informer)
	}
	return checker.HasSyncedChecker().Done()
}

func genericTypedSyncer(strip bool) syncer {
	return func(b *testing.B, ctx context.Context, config *rest.Config, gvr schema.GroupVersionResource) (<-chan struct{}, func()) {
		var opts []generic.FactoryOption
		if strip {
			opts = append(opts, generic.WithStripManagedFields())
		}
		factory, err := typed.NewFactory(config, scheme, opts...)
		if err != nil {
			b.Fatal(err)
		}
		var informer toolscache.SharedIndexInformer
		if gvr == widget.GVR {
			i, err := typed.InformerFor[*widget.Widget](factory)
			if err != nil {
				b.Fatal(err)
			}
			informer = i.Informer()
		} else {
			i, err := typed.InformerFor[*corev1.ConfigMap](factory)
			if err != nil {
				b.Fatal(err)
			}
			informer = i.Informer()
		}
		factory.Start(ctx)
		return syncedChannel(b, informer), factory.Shutdown
	}
}

// genericUnstructuredSyncer syncs *unstructured.Unstructured through the
// one factory (typed.UnstructuredFor): JSON decoded in one pass, built-in
// kinds from protobuf converted once.
func genericUnstructuredSyncer(strip bool) syncer {
	return func(b *testing.B, ctx context.Context, config *rest.Config, gvr schema.GroupVersionResource) (<-chan struct{}, func()) {
		var opts []generic.FactoryOption
		if strip {
			opts = append(opts, generic.WithStripManagedFields())
		}
		factory, err := typed.NewFactory(config, scheme, opts...)
		if err != nil {
			b.Fatal(err)
		}
		informer, err := typed.UnstructuredFor(factory, gvr)
		if err != nil {
			b.Fatal(err)
		}
		factory.Start(ctx)
		return syncedChannel(b, informer.Informer()), factory.Shutdown
	}
}

// genericDropInSyncer syncs *unstructured.Unstructured through the drop-in
// for client-go's dynamicinformer, over client-go's dynamic client.
func genericDropInSyncer(b *testing.B, ctx context.Context, config *rest.Config, gvr schema.GroupVersionResource) (<-chan struct{}, func()) {
	factory := genericunstructured.NewDynamicSharedInformerFactory(dynamic.NewForConfigOrDie(config), 0)
	informer := factory.ForResource(gvr)
	factory.Start(ctx.Done())
	return syncedChannel(b, informer.Informer()), factory.Shutdown
}

func clientGoTypedSyncer(b *testing.B, ctx context.Context, config *rest.Config, gvr schema.GroupVersionResource) (<-chan struct{}, func()) {
	if gvr == widget.GVR {
		// No informer-gen for Widgets: the informer it would generate, by
		// hand (a typed REST client's ListWatch, as informer-gen writes).
		informer := toolscache.NewSharedIndexInformer(widgetListWatch(b, config), &widget.Widget{}, 0,
			toolscache.Indexers{toolscache.NamespaceIndex: toolscache.MetaNamespaceIndexFunc})
		runCtx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { defer close(done); informer.RunWithContext(runCtx) }()
		return syncedChannel(b, informer), func() { cancel(); <-done }
	}
	factory := informers.NewSharedInformerFactory(kubernetes.NewForConfigOrDie(config), 0)
	informer := factory.Core().V1().ConfigMaps().Informer()
	runCtx, cancel := context.WithCancel(ctx)
	factory.Start(runCtx.Done())
	return syncedChannel(b, informer), func() { cancel(); factory.Shutdown() }
}

func widgetListWatch(b *testing.B, config *rest.Config) toolscache.ListerWatcher {
	c := rest.CopyConfig(config)
	c.GroupVersion = &widget.SchemeGroupVersion
	c.APIPath = "/apis"
	c.NegotiatedSerializer = serializer.NewCodecFactory(scheme).WithoutConversion()
	client, err := rest.RESTClientFor(c)
	if err != nil {
		b.Fatal(err)
	}
	return toolscache.ToListWatcherWithWatchListSemantics(toolscache.NewFilteredListWatchFromClient(client, "widgets", "", func(*metav1.ListOptions) {}), client)
}

func clientGoDynamicSyncer(b *testing.B, ctx context.Context, config *rest.Config, gvr schema.GroupVersionResource) (<-chan struct{}, func()) {
	factory := dynamicinformer.NewDynamicSharedInformerFactory(dynamic.NewForConfigOrDie(config), 0)
	informer := factory.ForResource(gvr).Informer()
	runCtx, cancel := context.WithCancel(ctx)
	factory.Start(runCtx.Done())
	return syncedChannel(b, informer), func() { cancel(); factory.Shutdown() }
}

func controllerRuntimeSyncer(b *testing.B, ctx context.Context, config *rest.Config, gvr schema.GroupVersionResource) (<-chan struct{}, func()) {
	c, err := crcache.New(config, crcache.Options{Scheme: scheme})
	if err != nil {
		b.Fatal(err)
	}
	var obj client.Object = &corev1.ConfigMap{}
	if gvr == widget.GVR {
		obj = &widget.Widget{}
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); _ = c.Start(runCtx) }()
	informer, err := c.GetInformer(runCtx, obj)
	if err != nil {
		b.Fatal(err)
	}
	return syncedChannel(b, informer), func() { cancel(); <-done }
}

// syncContenders are the informers of the sync benchmark, in the report's
// order.
var syncContenders = []struct {
	name string
	run  syncer
}{
	{"generic-typed", genericTypedSyncer(false)},
	{"generic-typed-stripped", genericTypedSyncer(true)},
	{"generic-unstructured", genericUnstructuredSyncer(false)},
	{"generic-unstructured-stripped", genericUnstructuredSyncer(true)},
	{"generic-unstructured-dropin", genericDropInSyncer},
	{"client-go-typed", clientGoTypedSyncer},
	{"client-go-dynamic", clientGoDynamicSyncer},
	{"controller-runtime", controllerRuntimeSyncer},
}

// syncRound counts the runs of BenchmarkSync, to shuffle its contenders.
var syncRound int

type syncContender = struct {
	name string
	run  syncer
}

// shuffled returns the contenders in an order of their own for round n,
// the same from run to run.
func shuffled(n int) []syncContender {
	order := rand.New(rand.NewPCG(uint64(n), 1)).Perm(len(syncContenders))
	contenders := make([]syncContender, len(order))
	for i, j := range order {
		contenders[i] = syncContenders[j]
	}
	return contenders
}

// BenchmarkSync fills informers from the embedded API server: one op is
// one informer, from start until synced. It reports the heap the synced
// cache holds per object, measured in a process of its own (heapInChild:
// live heap after forced GCs, less the baseline before the informer
// started; see heap_test.go for why not in this process), and the time the
// sync took there (alone-ns/op) and the allocations the client made
// (alone-allocs/op, alone-B/op; allocs/op and B/op count the embedded API
// server's too).
//
// The contenders run in a different order at every -count run (shuffled,
// the same from run to run): in a fixed order, or merely rotated, the
// contenders next to each other shared the machine's slow and fast spells
// (interleaved A/B runs of two contenders showed no difference where the
// fixed order showed 20%).
func BenchmarkSync(b *testing.B) {
	config, _ := seededServer(b)
	order := shuffled(syncRound)
	syncRound++
	eachSyncCase(b, config, func(b *testing.B, gvr schema.GroupVersionResource) {
		for _, c := range order {
			b.Run("contender="+c.name, func(b *testing.B) { measureSync(b, config, gvr, c.name, c.run) })
		}
	})
}

// eachSyncCase runs measure as a sub-benchmark of b for each resource
// (ConfigMaps, Widgets) with client-go's WatchListClient feature on and
// off ("resource=configmaps/watchlist=on", ...), after warmUp.
func eachSyncCase(b *testing.B, config *rest.Config, measure func(b *testing.B, gvr schema.GroupVersionResource)) {
	for _, gvr := range []schema.GroupVersionResource{configMapsGVR, widget.GVR} {
		for _, watchList := range []bool{true, false} {
			name := fmt.Sprintf("resource=%s/watchlist=%s", gvr.Resource, map[bool]string{true: "on", false: "off"}[watchList])
			b.Run(name, func(b *testing.B) {
				clientfeaturestesting.SetFeatureDuringTest(b, clientfeatures.WatchListClient, watchList)
				warmUp(b, config, gvr)
				measure(b, gvr)
			})
		}
	}
}

// warmUp syncs each kind of client once, unmeasured, so that the API
// server has the objects' encodings cached before the first measured run.
func warmUp(b *testing.B, config *rest.Config, gvr schema.GroupVersionResource) {
	for _, run := range []syncer{genericTypedSyncer(false), genericUnstructuredSyncer(false)} {
		synced, stop := run(b, context.Background(), config, gvr)
		waitSynced(b, synced)
		stop()
	}
}

// measureSync times contender's syncs in this process, each from a
// collected heap, then measures once, in a child process (heapInChild), the
// live heap its synced cache holds, the time it takes to sync there
// (alone-ns/op: the client in a process of its own) and the allocations it
// makes to sync (alone-allocs/op, alone-B/op). allocs/op and B/op, of this
// process, count the embedded API server's allocations too.
func measureSync(b *testing.B, config *rest.Config, gvr schema.GroupVersionResource, contender string, run syncer) {
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		runtime.GC()
		b.StartTimer()
		synced, stop := run(b, context.Background(), config, gvr)
		waitSynced(b, synced)
		b.StopTimer()
		stop()
		b.StartTimer()
	}
	b.StopTimer()
	child := heapInChild(b, config, gvr, contender)
	heap := float64(child.heap)
	b.ReportMetric(heap, "heap-B")
	b.ReportMetric(heap/float64(objects), "B/object")
	b.ReportMetric(float64(child.sync.Nanoseconds()), "alone-ns/op")
	b.ReportMetric(float64(child.allocs), "alone-allocs/op")
	b.ReportMetric(float64(child.bytes), "alone-B/op")
}

func waitSynced(b *testing.B, synced <-chan struct{}) {
	select {
	case <-synced:
	case <-time.After(5 * time.Minute):
		b.Fatal("informer did not sync")
	}
}
