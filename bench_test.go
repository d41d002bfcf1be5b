package generic_test

import (
	"fmt"
	goruntime "runtime"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic/dynamiclister"
	listersv1 "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/generic-informers/generic"
)

// The read benchmarks put 10,000 Pods in 100 namespaces into one indexer
// (and their unstructured form into another), then read them through the
// generic Lister and through what client-go users write instead, in the same
// run: the generated corev1 lister, dynamiclister, and for ByIndex the
// indexer plus a type assertion loop. Compare with
//
//	go test -run '^$' -bench 'Lister' -count 10 | benchstat -col /lister -
const (
	benchNamespaces      = 100
	benchPodsInNamespace = 100
)

type benchPods struct {
	typed, unstructured cache.Indexer
	namespaces, names   []string
	selector            labels.Selector
}

func nodeIndexFunc(obj any) ([]string, error) {
	meta, err := metaOf(obj)
	if err != nil {
		return nil, err
	}
	return []string{meta.GetLabels()["node"]}, nil
}

func metaOf(obj any) (metav1.Object, error) {
	switch o := obj.(type) {
	case *corev1.Pod:
		return o, nil
	case *unstructured.Unstructured:
		return o, nil
	}
	return nil, fmt.Errorf("unexpected %T", obj)
}

func newBenchPods(b *testing.B) *benchPods {
	b.Helper()
	indexers := cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc, "node": nodeIndexFunc}
	p := &benchPods{
		typed:        cache.NewIndexer(cache.MetaNamespaceKeyFunc, indexers),
		unstructured: cache.NewIndexer(cache.MetaNamespaceKeyFunc, indexers),
		selector:     labels.SelectorFromSet(labels.Set{"app": "app-3"}),
	}
	for n := range benchNamespaces {
		namespace := "ns-" + strconv.Itoa(n)
		for i := range benchPodsInNamespace {
			pod := &corev1.Pod{
				TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
				ObjectMeta: metav1.ObjectMeta{
					Namespace: namespace, Name: "pod-" + strconv.Itoa(i),
					Labels: map[string]string{"app": "app-" + strconv.Itoa(i%10), "node": "node-" + strconv.Itoa((n*benchPodsInNamespace+i)%500)},
				},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}},
			}
			content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(pod)
			if err != nil {
				b.Fatal(err)
			}
			if err := p.typed.Add(pod); err != nil {
				b.Fatal(err)
			}
			if err := p.unstructured.Add(&unstructured.Unstructured{Object: content}); err != nil {
				b.Fatal(err)
			}
			p.namespaces = append(p.namespaces, namespace)
			p.names = append(p.names, pod.Name)
		}
	}
	// Collect the setup's garbage now, so that the first contender measured
	// does not pay for it with background GC work.
	goruntime.GC()
	return p
}

// The listers are made behind a function the compiler does not inline, as a
// controller gets them from informer.Lister(): calls through the interface
// are not devirtualized, as in real use.
//
//go:noinline
func benchListers(p *benchPods) (generic.Lister[*corev1.Pod], listersv1.PodLister, dynamiclister.Lister) {
	return generic.NewLister[*corev1.Pod](p.typed, podsGVR.GroupResource()),
		listersv1.NewPodLister(p.typed),
		dynamiclister.New(p.unstructured, podsGVR)
}

func BenchmarkListerGet(b *testing.B) {
	p := newBenchPods(b)
	lister, generated, dynamic := benchListers(p)
	n := len(p.names)
	b.Run("lister=generic", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if _, err := lister.Namespace(p.namespaces[i%n]).Get(p.names[i%n]); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("lister=client-go-generated", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if _, err := generated.Pods(p.namespaces[i%n]).Get(p.names[i%n]); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("lister=dynamiclister", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if _, err := dynamic.Namespace(p.namespaces[i%n]).Get(p.names[i%n]); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkListerNamespaceList(b *testing.B) {
	p := newBenchPods(b)
	lister, generated, dynamic := benchListers(p)
	want := benchPodsInNamespace / 10
	check := func(b *testing.B, got int, err error) {
		if err != nil || got != want {
			b.Fatalf("listed %d (error %v), want %d", got, err, want)
		}
	}
	b.Run("lister=generic", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			pods, err := lister.Namespace(p.namespaces[(i*benchPodsInNamespace)%len(p.namespaces)]).List(p.selector)
			check(b, len(pods), err)
		}
	})
	b.Run("lister=client-go-generated", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			pods, err := generated.Pods(p.namespaces[(i*benchPodsInNamespace)%len(p.namespaces)]).List(p.selector)
			check(b, len(pods), err)
		}
	})
	b.Run("lister=dynamiclister", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			pods, err := dynamic.Namespace(p.namespaces[(i*benchPodsInNamespace)%len(p.namespaces)]).List(p.selector)
			check(b, len(pods), err)
		}
	})
}

// BenchmarkListerByIndex compares ByIndex with what client-go users write,
// since neither the generated listers nor dynamiclister have ByIndex: the
// indexer's ByIndex and a loop of type assertions.
func BenchmarkListerByIndex(b *testing.B) {
	p := newBenchPods(b)
	lister, _, _ := benchListers(p)
	nodes := make([]string, 500)
	for i := range nodes {
		nodes[i] = "node-" + strconv.Itoa(i)
	}
	want := benchNamespaces * benchPodsInNamespace / len(nodes)
	check := func(b *testing.B, got int, err error) {
		if err != nil || got != want {
			b.Fatalf("got %d (error %v), want %d", got, err, want)
		}
	}
	b.Run("lister=generic", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			pods, err := lister.ByIndex("node", nodes[i%len(nodes)])
			check(b, len(pods), err)
		}
	})
	b.Run("lister=client-go-generated", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			objs, err := p.typed.ByIndex("node", nodes[i%len(nodes)])
			pods := make([]*corev1.Pod, 0, len(objs))
			for _, obj := range objs {
				pods = append(pods, obj.(*corev1.Pod))
			}
			check(b, len(pods), err)
		}
	})
	b.Run("lister=dynamiclister", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			objs, err := p.unstructured.ByIndex("node", nodes[i%len(nodes)])
			pods := make([]*unstructured.Unstructured, 0, len(objs))
			for _, obj := range objs {
				pods = append(pods, obj.(*unstructured.Unstructured))
			}
			check(b, len(pods), err)
		}
	})
}

// BenchmarkListerGetInPlace gets through listers made in the same function,
// where the compiler can see the generated lister's concrete type, turn its
// interface calls into direct ones and keep the NamespaceLister it returns
// off the heap: client-go's best case.
func BenchmarkListerGetInPlace(b *testing.B) {
	p := newBenchPods(b)
	n := len(p.names)
	b.Run("lister=generic", func(b *testing.B) {
		l := generic.NewLister[*corev1.Pod](p.typed, podsGVR.GroupResource())
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if _, err := l.Namespace(p.namespaces[i%n]).Get(p.names[i%n]); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("lister=client-go-generated", func(b *testing.B) {
		l := listersv1.NewPodLister(p.typed)
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if _, err := l.Pods(p.namespaces[i%n]).Get(p.names[i%n]); err != nil {
				b.Fatal(err)
			}
		}
	})
}
