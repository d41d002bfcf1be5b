package bench

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic/dynamiclister"
	listersv1 "k8s.io/client-go/listers/core/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/generic-informers/generic"
	genericunstructured "github.com/generic-informers/generic/unstructured"
)

// reader is one contender of the read benchmarks: the three reads, each
// returning how many objects it read.
type reader struct {
	name          string
	get           func(namespace, name string) int
	namespaceList func(namespace string, selector labels.Selector) int
	byIndex       func(node string) int // nil: no such read
	// list reads every namespace; set for controllerRuntimeReader's only.
	list func(selector labels.Selector) int
}

func nodeIndex(obj any) ([]string, error) {
	accessor, err := meta.Accessor(obj)
	if err != nil {
		return nil, err
	}
	return []string{accessor.GetLabels()["node"]}, nil
}

// syncedIndexer runs an informer over list and returns its indexer.
func syncedIndexer(b *testing.B, ctx context.Context, list runtime.Object, example runtime.Object) toolscache.Indexer {
	informer := toolscache.NewSharedIndexInformer(&memoryListerWatcher{list: list}, example, 0,
		toolscache.Indexers{toolscache.NamespaceIndex: toolscache.MetaNamespaceIndexFunc, "node": nodeIndex})
	go informer.RunWithContext(ctx)
	if !toolscache.WaitForCacheSync(ctx.Done(), informer.HasSynced) {
		b.Fatal("informer did not sync")
	}
	return informer.GetIndexer()
}

// newReaders returns every contender of the read benchmarks, over the
// shared read caches (sharedReadCaches).
func newReaders(b *testing.B) []reader {
	b.Helper()
	caches := sharedReadCaches(b)
	return []reader{
		genericTypedReader("generic-typed", typedLister(caches.typed)), genericUnstructuredReader(unstructuredLister(caches.unstructured)),
		clientGoReader("client-go", podLister(caches.typed), caches.typed), clientGoInPlaceReader(caches.typed),
		dynamicListerReader(dynamicLister(caches.dynamic), caches.dynamic),
		dropInReader(dropInLister(caches.dropIn)),
		controllerRuntimeReader("controller-runtime", caches.controllerRuntime),
		controllerRuntimeReader("controller-runtime-nodeepcopy", caches.controllerRuntimeNoDeepCopy),
		controllerRuntimeReader("ctrlcache", caches.ctrlcache),
	}
}

// The listers are made behind functions the compiler does not inline, as a
// controller gets them from an informer's Lister(): their concrete types are
// unknown where they are read, and their calls not devirtualized.
// clientGoInPlaceReader is client-go's best case, a lister made where it is
// read.

//go:noinline
func typedLister(indexer toolscache.Indexer) generic.Lister[*corev1.Pod] {
	return generic.NewLister[*corev1.Pod](indexer, podsGVR.GroupResource())
}

//go:noinline
func unstructuredLister(indexer toolscache.Indexer) generic.Lister[*unstructured.Unstructured] {
	return generic.NewLister[*unstructured.Unstructured](indexer, podsGVR.GroupResource())
}

//go:noinline
func podLister(indexer toolscache.Indexer) listersv1.PodLister {
	return listersv1.NewPodLister(indexer)
}

//go:noinline
func dynamicLister(indexer toolscache.Indexer) dynamiclister.Lister {
	return dynamiclister.New(indexer, podsGVR)
}

//go:noinline
func dropInLister(indexer toolscache.Indexer) genericunstructured.Lister {
	return genericunstructured.New(indexer, podsGVR)
}

// dropInReader reads the drop-in's cache by its Lister, as code moved from
// dynamiclister does (its ByIndex, which the Lister New returns has).
func dropInReader(l genericunstructured.Lister) reader {
	indexed := l.(interface {
		ByIndex(indexName, indexedValue string) ([]*unstructured.Unstructured, error)
	})
	return reader{
		name:          "generic-unstructured-dropin",
		get:           func(ns, name string) int { return one(l.Namespace(ns).Get(name)) },
		namespaceList: func(ns string, s labels.Selector) int { return count(l.Namespace(ns).List(s)) },
		byIndex:       func(node string) int { return count(indexed.ByIndex("node", node)) },
	}
}

// genericTypedReader reads with the generic Lister of *corev1.Pod, as
// name.
func genericTypedReader(name string, l generic.Lister[*corev1.Pod]) reader {
	return reader{
		name:          name,
		get:           func(ns, name string) int { return one(l.Namespace(ns).Get(name)) },
		namespaceList: func(ns string, s labels.Selector) int { return count(l.Namespace(ns).List(s)) },
		byIndex:       func(node string) int { return count(l.ByIndex("node", node)) },
	}
}

func genericUnstructuredReader(l generic.Lister[*unstructured.Unstructured]) reader {
	return reader{
		name:          "generic-unstructured",
		get:           func(ns, name string) int { return one(l.Namespace(ns).Get(name)) },
		namespaceList: func(ns string, s labels.Selector) int { return count(l.Namespace(ns).List(s)) },
		byIndex:       func(node string) int { return count(l.ByIndex("node", node)) },
	}
}

func clientGoReader(name string, l listersv1.PodLister, indexer toolscache.Indexer) reader {
	return reader{
		name:          name,
		get:           func(ns, name string) int { return one(l.Pods(ns).Get(name)) },
		namespaceList: func(ns string, s labels.Selector) int { return count(l.Pods(ns).List(s)) },
		// The generated listers have no ByIndex: users call the indexer
		// and assert the type of each object.
		byIndex: func(node string) int {
			objs, err := indexer.ByIndex("node", node)
			if err != nil {
				panic(err)
			}
			pods := make([]*corev1.Pod, 0, len(objs))
			for _, obj := range objs {
				pods = append(pods, obj.(*corev1.Pod))
			}
			return count(keep(pods), nil)
		},
	}
}

func dynamicListerReader(l dynamiclister.Lister, indexer toolscache.Indexer) reader {
	return reader{
		name:          "client-go-dynamiclister",
		get:           func(ns, name string) int { return one(l.Namespace(ns).Get(name)) },
		namespaceList: func(ns string, s labels.Selector) int { return count(l.Namespace(ns).List(s)) },
		byIndex: func(node string) int {
			objs, err := indexer.ByIndex("node", node)
			if err != nil {
				panic(err)
			}
			pods := make([]*unstructured.Unstructured, 0, len(objs))
			for _, obj := range objs {
				pods = append(pods, obj.(*unstructured.Unstructured))
			}
			return count(keep(pods), nil)
		},
	}
}

// clientGoInPlaceReader makes the generated lister where it reads it.
func clientGoInPlaceReader(indexer toolscache.Indexer) reader {
	l := listersv1.NewPodLister(indexer)
	r := clientGoReader("client-go-inplace", l, indexer)
	r.get = func(ns, name string) int { return one(l.Pods(ns).Get(name)) }
	r.namespaceList = func(ns string, s labels.Selector) int { return count(l.Pods(ns).List(s)) }
	return r
}

// controllerRuntimeReader reads through a controller-runtime cache's
// client.Reader.
func controllerRuntimeReader(name string, r client.Reader) reader {
	return reader{
		name: name,
		get: func(ns, name string) int {
			var pod corev1.Pod
			return one(&pod, r.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &pod))
		},
		namespaceList: func(ns string, s labels.Selector) int {
			var pods corev1.PodList
			return count(pods.Items, r.List(context.Background(), &pods, client.InNamespace(ns), client.MatchingLabelsSelector{Selector: s}))
		},
		byIndex: func(node string) int {
			var pods corev1.PodList
			return count(pods.Items, r.List(context.Background(), &pods, client.MatchingFields{"node": node}))
		},
		list: func(s labels.Selector) int {
			var pods corev1.PodList
			return count(pods.Items, r.List(context.Background(), &pods, client.MatchingLabelsSelector{Selector: s}))
		},
	}
}

// sink keeps what a read returned, as a caller would use it: the compiler
// cannot then keep it on the stack.
var sink any

func keep[T any](objs []T) []T {
	sink = objs
	return objs
}

func one[T any](_ T, err error) int {
	if err != nil {
		panic(err)
	}
	return 1
}

func count[T any](objs []T, err error) int {
	if err != nil {
		panic(err)
	}
	return len(objs)
}

// BenchmarkReadGet gets one Pod by namespace and name.
func BenchmarkReadGet(b *testing.B) {
	readers := newReaders(b)
	for _, r := range readers {
		b.Run("contender="+r.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				p := i % objects
				r.get(namespaceOf(p), podName(p))
			}
		})
	}
}

// BenchmarkReadNamespaceList lists the Pods of one namespace that a label
// selector matches (a tenth of them).
func BenchmarkReadNamespaceList(b *testing.B) {
	readers := newReaders(b)
	// Pods of a namespace have app labels app-0, app-1, ... in turn.
	want := 0
	for k := range objects / namespaces {
		if k%10 == 3 {
			want++
		}
	}
	for _, r := range readers {
		b.Run("contender="+r.name, func(b *testing.B) {
			selector := labels.SelectorFromSet(labels.Set{"app": "app-3"})
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if got := r.namespaceList(namespaceOf(i), selector); got != want {
					b.Fatalf("listed %d, want %d", got, want)
				}
			}
		})
	}
}

// BenchmarkReadByIndex reads the Pods of one node through an index.
func BenchmarkReadByIndex(b *testing.B) {
	readers := newReaders(b)
	want := objects / nodes
	for _, r := range readers {
		b.Run("contender="+r.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if got := r.byIndex(nodeName(i)); got != want {
					b.Fatalf("read %d, want %d", got, want)
				}
			}
		})
	}
}
