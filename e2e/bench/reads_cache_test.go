package bench

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"strconv"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	apiruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/ctrlcache"
	"github.com/generic-informers/generic/e2e/apiserver"
	"github.com/generic-informers/generic/e2e/internal/cluster"
	"github.com/generic-informers/generic/typed"
	genericunstructured "github.com/generic-informers/generic/unstructured"
)

// readCaches are the caches the read benchmarks read: the benchmark Pods,
// listed from the embedded API server by each kind of informer, so that
// every cache holds its objects as its users' caches hold them:
//
//   - typed: client-go's typed Pod informer (protobuf), read by the
//     generic Lister of *corev1.Pod and by client-go's generated lister;
//   - typedControl: another such informer's, for BenchmarkReadInterleaved,
//     whose contenders must not read objects another has just read;
//   - typedShared: this library's typed Pod informer (typed.InformerFor,
//     protobuf), whose decoder makes its objects share what repeats (the
//     default), read by the generic Lister of *corev1.Pod: its reads
//     against those of typed's, for issue 27's "reads within noise";
//   - unstructured: typed.UnstructuredFor's informer, read by the generic
//     Lister of *unstructured.Unstructured (the library's decoder:
//     protobuf converted once, repeated strings and labels shared);
//   - dynamic: client-go's dynamic informer (JSON, as the dynamic client
//     decodes it), read by dynamiclister;
//   - dropIn: the drop-in's informer (package unstructured, over client-go's
//     dynamic client: objects as it decodes them, laid out at ingest), read
//     by its Lister, as code moved from dynamicinformer reads it;
//   - controllerRuntime and controllerRuntimeNoDeepCopy: controller-runtime
//     caches, deep-copying (its default) and not (UnsafeDisableDeepCopy);
//     controllerRuntimeControl another deep-copying one, for the control of
//     BenchmarkReadInterleaved's reads through client.Reader;
//   - ctrlcache: ctrlcache.New's cache (this library's informers under
//     controller-runtime's cache.Cache), deep-copying (the default).
//
// Each has the namespace index and a node index.
//
// They are filled once per process (sharedReadCaches), one after the
// other, from an API server of their own, which is stopped with every
// informer before the first read is measured, and its garbage collected:
// its work and its collections do not count in the reads. (That was not
// what made the same read on the same cache measure up to twice as slow
// from one run to the next, in the report of 0197ee3: the swings stayed,
// see BenchmarkReadInterleaved.) The caches stay for the rest of the
// process, about six times the Pods' heap: benchmarks after them in one
// process (go test -bench .) run beside it.
type readCaches struct {
	typed, typedControl, unstructured, dynamic     toolscache.Indexer
	dropIn, typedShared                            toolscache.Indexer
	controllerRuntime, controllerRuntimeNoDeepCopy client.Reader
	controllerRuntimeControl, ctrlcache            client.Reader
}

var (
	readCachesOnce   sync.Once
	readCachesFilled *readCaches
	readCachesErr    error
)

// sharedReadCaches returns the read caches, filling them on first use
// (fillReadCaches). It fails b if they could not be filled.
func sharedReadCaches(b *testing.B) *readCaches {
	b.Helper()
	readCachesOnce.Do(func() { readCachesFilled, readCachesErr = fillReadCaches() })
	if readCachesErr != nil {
		b.Fatal(readCachesErr)
	}
	return readCachesFilled
}

// fillReadCaches starts an API server, seeds it with the benchmark Pods,
// fills every read cache from it, then stops the informers, the server
// and its etcd, and collects their garbage. A stopped informer's cache
// stays readable: the caches hold the Pods as they were listed.
func fillReadCaches() (caches *readCaches, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	server, err := apiserver.Start(ctx, apiserver.Options{})
	if err != nil {
		return nil, err
	}
	defer server.Stop()
	c, err := cluster.New(server.Config)
	if err != nil {
		return nil, err
	}
	if err := seedPods(c); err != nil {
		return nil, err
	}
	informersCtx, stopInformers := context.WithCancel(ctx)
	caches, stopped, err := startReadCaches(informersCtx, server.Config)
	// Every informer stops before the server does (the deferred Stop):
	// none is left retrying against it.
	stopInformers()
	stopped()
	if err != nil {
		return nil, err
	}
	server.Stop()
	// Checked before the collection: the check of the deep-copying
	// controller-runtime cache copies every Pod, garbage the first
	// measured read would otherwise collect.
	if err := caches.check(); err != nil {
		return nil, fmt.Errorf("after the server stopped: %w", err)
	}
	runtime.GC()
	runtime.GC()
	debug.FreeOSMemory()
	return caches, nil
}

// startReadCaches starts every informer of the read caches on ctx, one
// after the other, each once the previous one has synced. stopped waits until, ctx ended, every
// informer has stopped; call it even on an error.
func startReadCaches(ctx context.Context, config *rest.Config) (caches *readCaches, stopped func(), err error) {
	var waits []func()
	stopped = func() {
		for _, wait := range waits {
			wait()
		}
	}
	nodeIndexers := toolscache.Indexers{"node": nodeIndex}
	protobuf := rest.CopyConfig(config)
	protobuf.ContentType = "application/vnd.kubernetes.protobuf"
	typedFactory := informers.NewSharedInformerFactory(kubernetes.NewForConfigOrDie(protobuf), 0)
	typedInformer := typedFactory.Core().V1().Pods().Informer()
	controlFactory := informers.NewSharedInformerFactory(kubernetes.NewForConfigOrDie(protobuf), 0)
	controlInformer := controlFactory.Core().V1().Pods().Informer()
	dynamicFactory := dynamicinformer.NewDynamicSharedInformerFactory(dynamic.NewForConfigOrDie(config), 0)
	dynamicInformer := dynamicFactory.ForResource(podsGVR).Informer()
	dropInFactory := genericunstructured.NewDynamicSharedInformerFactory(dynamic.NewForConfigOrDie(config), 0)
	dropInInformer := dropInFactory.ForResource(podsGVR).Informer()
	for _, informer := range []toolscache.SharedIndexInformer{typedInformer, controlInformer, dynamicInformer, dropInInformer} {
		if err := informer.AddIndexers(nodeIndexers); err != nil {
			return nil, stopped, err
		}
	}
	factory, err := typed.NewFactory(config, clientgoscheme.Scheme, generic.WithIndexers(nodeIndexers))
	if err != nil {
		return nil, stopped, err
	}
	// The factories' Shutdown waits for their informers, which stop with
	// ctx.
	waits = append(waits, typedFactory.Shutdown, controlFactory.Shutdown, dynamicFactory.Shutdown, dropInFactory.Shutdown, factory.Shutdown)
	unstructuredInformer, err := typed.UnstructuredFor(factory, podsGVR)
	if err != nil {
		return nil, stopped, err
	}
	// A factory of its own, so that its cache fills after the others.
	sharedFactory, err := typed.NewFactory(config, clientgoscheme.Scheme, generic.WithIndexers(nodeIndexers))
	if err != nil {
		return nil, stopped, err
	}
	waits = append(waits, sharedFactory.Shutdown)
	sharedInformer, err := typed.InformerFor[*corev1.Pod](sharedFactory)
	if err != nil {
		return nil, stopped, err
	}
	// One cache after the other, as a process fills its one cache: filled
	// together, the objects of two caches would be allocated in turn, side
	// by side, and reading one would bring the other's into the CPU's
	// cache.
	for _, fill := range []struct {
		start     func()
		hasSynced toolscache.InformerSynced
	}{
		{func() { typedFactory.Start(ctx.Done()) }, typedInformer.HasSynced},
		{func() { controlFactory.Start(ctx.Done()) }, controlInformer.HasSynced},
		{func() { factory.Start(ctx) }, unstructuredInformer.HasSynced},
		{func() { dynamicFactory.Start(ctx.Done()) }, dynamicInformer.HasSynced},
		{func() { dropInFactory.Start(ctx.Done()) }, dropInInformer.HasSynced},
		{func() { sharedFactory.Start(ctx) }, sharedInformer.HasSynced},
	} {
		fill.start()
		if !toolscache.WaitForCacheSync(ctx.Done(), fill.hasSynced) {
			return nil, stopped, errors.New("read caches did not sync")
		}
	}
	caches = &readCaches{
		typed: typedInformer.GetIndexer(), typedControl: controlInformer.GetIndexer(), unstructured: unstructuredInformer.Informer().GetIndexer(),
		dynamic: dynamicInformer.GetIndexer(), dropIn: dropInInformer.GetIndexer(), typedShared: sharedInformer.Informer().GetIndexer(),
	}
	for _, cache := range []struct {
		reader     *client.Reader
		newCache   crcache.NewCacheFunc
		noDeepCopy bool
		// keepRunning: the cache runs for the rest of the process, its
		// informer retrying against the stopped server (with client-go's
		// backoff, up to 30 s apart). ctrlcache reads through the
		// Registry's Handles, which refuse reads once their informer
		// has stopped; controller-runtime's stopped cache reads on.
		keepRunning bool
	}{
		{&caches.controllerRuntime, crcache.New, false, false},
		{&caches.controllerRuntimeNoDeepCopy, crcache.New, true, false},
		{&caches.controllerRuntimeControl, crcache.New, false, false},
		{&caches.ctrlcache, ctrlcache.New, false, true},
	} {
		runCtx := ctx
		if cache.keepRunning {
			runCtx = context.WithoutCancel(ctx)
		}
		reader, wait, err := startControllerRuntimeCache(ctx, runCtx, config, cache.newCache, cache.noDeepCopy)
		if !cache.keepRunning {
			waits = append(waits, wait)
		}
		if err != nil {
			return nil, stopped, err
		}
		*cache.reader = reader
	}
	return caches, stopped, nil
}

// startControllerRuntimeCache starts a cache newCache makes (a
// controller-runtime cache.NewCacheFunc) of the benchmark Pods, with the
// node index, to run until run ends, and waits until it has synced, or ctx
// ends. wait waits until, run ended, it has stopped.
func startControllerRuntimeCache(ctx, run context.Context, config *rest.Config, newCache crcache.NewCacheFunc, noDeepCopy bool) (reader client.Reader, wait func(), err error) {
	done := make(chan struct{})
	wait = func() { <-done }
	c, err := newCache(config, crcache.Options{
		Scheme:                       clientgoscheme.Scheme,
		DefaultUnsafeDisableDeepCopy: ptr.To(noDeepCopy),
	})
	if err != nil {
		close(done)
		return nil, wait, err
	}
	if err := c.IndexField(ctx, &corev1.Pod{}, "node", func(o client.Object) []string { return []string{o.GetLabels()["node"]} }); err != nil {
		close(done)
		return nil, wait, err
	}
	go func() {
		defer close(done)
		_ = c.Start(run)
	}()
	if _, err := c.GetInformer(ctx, &corev1.Pod{}); err != nil {
		return nil, wait, err
	}
	if !c.WaitForCacheSync(ctx) {
		return nil, wait, errors.New("controller-runtime cache did not sync")
	}
	return c, wait, nil
}

// check returns an error unless every cache holds the `objects` Pods.
func (c *readCaches) check() error {
	for name, indexer := range map[string]toolscache.Indexer{"typed": c.typed, "typedControl": c.typedControl, "unstructured": c.unstructured, "dynamic": c.dynamic, "dropIn": c.dropIn, "typedShared": c.typedShared} {
		if n := len(indexer.ListKeys()); n != objects {
			return fmt.Errorf("%s cache holds %d Pods, want %d", name, n, objects)
		}
	}
	for name, reader := range map[string]client.Reader{
		"controller-runtime": c.controllerRuntime, "controller-runtime-nodeepcopy": c.controllerRuntimeNoDeepCopy,
		"controller-runtime-control": c.controllerRuntimeControl, "ctrlcache": c.ctrlcache,
	} {
		var pods corev1.PodList
		if err := reader.List(context.Background(), &pods); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if len(pods.Items) != objects {
			return fmt.Errorf("%s cache holds %d Pods, want %d", name, len(pods.Items), objects)
		}
	}
	return nil
}

func seedPods(c *cluster.Cluster) error {
	ctx := context.Background()
	var prelude []*unstructured.Unstructured
	for i := range namespaces {
		prelude = append(prelude, cluster.Namespace("ns-"+strconv.Itoa(i)))
	}
	if err := c.Apply(ctx, prelude...); err != nil {
		return err
	}
	started := time.Now()
	err := createConcurrently(objects, func(i int) error {
		pod := newPod(i)
		pod.ResourceVersion = ""
		content, err := apiruntime.DefaultUnstructuredConverter.ToUnstructured(pod)
		if err != nil {
			return err
		}
		_, err = c.Dynamic.Resource(podsGVR).Namespace(pod.Namespace).Create(ctx, &unstructured.Unstructured{Object: content}, metav1.CreateOptions{})
		return err
	})
	if err != nil {
		return err
	}
	fmt.Printf("seeded %d Pods in %v\n", objects, time.Since(started).Round(time.Millisecond))
	return nil
}
