package bench

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

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

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/e2e/internal/cluster"
	"github.com/generic-informers/generic/typed"
)

// readCaches are the caches the read benchmarks read: the benchmark Pods,
// listed from the embedded API server by each kind of informer, so that
// every cache holds its objects as its users' caches hold them:
//
//   - typed: client-go's typed Pod informer (protobuf), read by the
//     generic Lister of *corev1.Pod and by client-go's generated lister;
//   - unstructured: typed.UnstructuredFor's informer, read by the generic
//     Lister of *unstructured.Unstructured (the library's decoder:
//     protobuf converted once, repeated strings and labels shared);
//   - dynamic: client-go's dynamic informer (JSON, as the dynamic client
//     decodes it), read by dynamiclister.
//
// Each has the namespace index and a node index.
type readCaches struct {
	typed, unstructured, dynamic toolscache.Indexer
	config                       *rest.Config
}

// newReadCaches fills the caches; they stop when ctx ends or at b's
// cleanup, whichever comes first.
func newReadCaches(b *testing.B, ctx context.Context) *readCaches {
	b.Helper()
	config := podServer(b)
	ctx, cancel := context.WithCancel(ctx)
	nodeIndexers := toolscache.Indexers{"node": nodeIndex}

	protobuf := rest.CopyConfig(config)
	protobuf.ContentType = "application/vnd.kubernetes.protobuf"
	typedFactory := informers.NewSharedInformerFactory(kubernetes.NewForConfigOrDie(protobuf), 0)
	typedInformer := typedFactory.Core().V1().Pods().Informer()
	dynamicFactory := dynamicinformer.NewDynamicSharedInformerFactory(dynamic.NewForConfigOrDie(config), 0)
	dynamicInformer := dynamicFactory.ForResource(podsGVR).Informer()
	for _, informer := range []toolscache.SharedIndexInformer{typedInformer, dynamicInformer} {
		if err := informer.AddIndexers(nodeIndexers); err != nil {
			b.Fatal(err)
		}
	}
	factory, err := typed.NewFactory(config, clientgoscheme.Scheme, generic.WithIndexers(nodeIndexers))
	if err != nil {
		b.Fatal(err)
	}
	// Cancelled first: the factories' Shutdown waits for their informers,
	// which stop with ctx.
	b.Cleanup(func() { cancel(); typedFactory.Shutdown(); dynamicFactory.Shutdown(); factory.Shutdown() })
	unstructuredInformer, err := typed.UnstructuredFor(factory, podsGVR)
	if err != nil {
		b.Fatal(err)
	}
	typedFactory.Start(ctx.Done())
	dynamicFactory.Start(ctx.Done())
	factory.Start(ctx)
	if !toolscache.WaitForCacheSync(ctx.Done(), typedInformer.HasSynced, dynamicInformer.HasSynced, unstructuredInformer.HasSynced) {
		b.Fatal("read caches did not sync")
	}
	caches := &readCaches{
		typed: typedInformer.GetIndexer(), unstructured: unstructuredInformer.Informer().GetIndexer(),
		dynamic: dynamicInformer.GetIndexer(), config: config,
	}
	for name, indexer := range map[string]toolscache.Indexer{"typed": caches.typed, "unstructured": caches.unstructured, "dynamic": caches.dynamic} {
		if n := len(indexer.ListKeys()); n != objects {
			b.Fatalf("%s cache holds %d Pods, want %d", name, n, objects)
		}
	}
	return caches
}

var (
	podSeedOnce sync.Once
	podSeedErr  error
)

// podServer returns the embedded server holding the benchmark Pods
// (newPod), `objects` of them, in namespaces ns-0 to ns-99.
func podServer(b *testing.B) *rest.Config {
	b.Helper()
	s := sharedServer(b)
	podSeedOnce.Do(func() {
		c, err := cluster.New(s.Config)
		if err != nil {
			podSeedErr = err
			return
		}
		podSeedErr = seedPods(c)
	})
	if podSeedErr != nil {
		b.Fatal(podSeedErr)
	}
	return s.Config
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
