package bench

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/generic-informers/generic"
)

// ingestEvents are the watch events of the ingest benchmark: 10 events per
// object, as adds of every object, then updates of each in turn.
func ingestEvents() []watch.Event {
	events := make([]watch.Event, 0, 10*objects)
	for i := range objects {
		events = append(events, watch.Event{Type: watch.Added, Object: newPod(i)})
	}
	for round := 1; len(events) < 10*objects; round++ {
		for i := 0; i < objects && len(events) < 10*objects; i++ {
			pod := newPod(i)
			pod.ResourceVersion = strconv.Itoa(round*objects + i + 1)
			events = append(events, watch.Event{Type: watch.Modified, Object: pod})
		}
	}
	return events
}

// ingester runs one informer over lw until its handler has counted want
// events.
type ingester func(ctx context.Context, lw toolscache.ListerWatcher, want int64, done chan<- struct{})

func counted(n *atomic.Int64, want int64, done chan<- struct{}) {
	if n.Add(1) == want {
		close(done)
	}
}

func genericIngester(ctx context.Context, lw toolscache.ListerWatcher, want int64, done chan<- struct{}) {
	informer, _ := generic.NewInformer[*corev1.Pod](lw, podsGVR, nil) // no options: no error
	var n atomic.Int64
	_, _ = informer.AddEventHandler(toolscache.TypedResourceEventHandlerFuncs[*corev1.Pod]{
		AddFunc:    func(*corev1.Pod) { counted(&n, want, done) },
		UpdateFunc: func(_, _ *corev1.Pod) { counted(&n, want, done) },
	})
	informer.Run(ctx)
}

func clientGoIngester(ctx context.Context, lw toolscache.ListerWatcher, want int64, done chan<- struct{}) {
	informer := toolscache.NewSharedIndexInformer(lw, &corev1.Pod{}, 0,
		toolscache.Indexers{toolscache.NamespaceIndex: toolscache.MetaNamespaceIndexFunc})
	var n atomic.Int64
	_, _ = informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { counted(&n, want, done) },
		UpdateFunc: func(_, _ any) { counted(&n, want, done) },
	})
	informer.RunWithContext(ctx)
}

// BenchmarkIngest feeds 10 watch events per object (adds, then updates)
// through an informer to a handler that counts them; one op is all of them,
// from start to the last event handled.
func BenchmarkIngest(b *testing.B) {
	events := ingestEvents()
	empty := &corev1.PodList{}
	empty.ResourceVersion = "1"
	for _, c := range []struct {
		name string
		run  ingester
	}{{"generic", genericIngester}, {"client-go", clientGoIngester}} {
		b.Run("contender="+c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				ctx, cancel := context.WithCancel(context.Background())
				done, stopped := make(chan struct{}), make(chan struct{})
				go func() {
					defer close(stopped)
					c.run(ctx, &memoryListerWatcher{list: empty, events: events}, int64(len(events)), done)
				}()
				<-done
				cancel()
				<-stopped
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(events)), "ns/event")
		})
	}
}

// BenchmarkTypedViewRead reads a typed Pod from a cache fed unstructured
// objects: converted once at ingest (a generic.Lister[*corev1.Pod] over
// what FromUnstructured stored), against the common pattern of converting
// at every read (dynamiclister, then apimachinery's converter).
func BenchmarkTypedViewRead(b *testing.B) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	lw := &memoryListerWatcher{list: unstructuredPodList(objects)}
	atIngest, _ := generic.NewInformer(lw, podsGVR, generic.FromUnstructured[*corev1.Pod]()) // no options: no error
	go atIngest.Run(ctx)
	untyped := syncedIndexer(b, ctx, unstructuredPodList(objects), &unstructured.Unstructured{})
	if !toolscache.WaitForCacheSync(ctx.Done(), atIngest.HasSynced) {
		b.Fatal("not synced")
	}
	converted := typedLister(atIngest.Informer().GetIndexer())
	perRead := dynamicLister(untyped)

	b.Run("contender=convert-at-ingest", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			pod, err := converted.Namespace(namespaceOf(i)).Get(podName(i%objects/namespaces*namespaces + i%namespaces))
			if err != nil || pod.Spec.NodeName == "" {
				b.Fatal(err)
			}
		}
	})
	b.Run("contender=convert-per-read", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			u, err := perRead.Namespace(namespaceOf(i)).Get(podName(i%objects/namespaces*namespaces + i%namespaces))
			if err != nil {
				b.Fatal(err)
			}
			var pod corev1.Pod
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &pod); err != nil || pod.Spec.NodeName == "" {
				b.Fatal(err)
			}
		}
	})
}
