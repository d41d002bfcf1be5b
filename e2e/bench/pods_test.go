package bench

import (
	"context"
	"strconv"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
)

var podsGVR = schema.GroupVersionResource{Version: "v1", Resource: "pods"}

// namespaces is how many namespaces the Pods are spread over.
const namespaces = 100

// nodes is how many nodes the Pods are spread over (for ByIndex).
const nodes = 500

// newPod is Pod i of the benchmark set: pod-i in namespace ns-(i%100),
// labelled app=app-(i/100%10) and node=node-(i%500).
func newPod(i int) *corev1.Pod {
	return &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{
			Namespace: namespaceOf(i), Name: podName(i),
			ResourceVersion: strconv.Itoa(i + 1),
			Labels:          map[string]string{"app": "app-" + strconv.Itoa(i/namespaces%10), "node": nodeName(i)},
		},
		Spec: corev1.PodSpec{NodeName: nodeName(i), Containers: []corev1.Container{{Name: "c", Image: "nginx:1.27"}}},
	}
}

// namespaceOf, podName and nodeName name Pod i's namespace, the Pod, and
// its node.
func namespaceOf(i int) string { return "ns-" + strconv.Itoa(i%namespaces) }
func podName(i int) string     { return "pod-" + strconv.Itoa(i) }
func nodeName(i int) string    { return "node-" + strconv.Itoa(i%nodes) }

func podList(n int) *corev1.PodList {
	list := &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: strconv.Itoa(n + 1)}}
	for i := range n {
		list.Items = append(list.Items, *newPod(i))
	}
	return list
}

func unstructuredPodList(n int) *unstructured.UnstructuredList {
	list := &unstructured.UnstructuredList{Object: map[string]any{"apiVersion": "v1", "kind": "PodList"}}
	list.SetResourceVersion(strconv.Itoa(n + 1))
	for i := range n {
		content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(newPod(i))
		if err != nil {
			panic(err)
		}
		list.Items = append(list.Items, unstructured.Unstructured{Object: content})
	}
	return list
}

// memoryListerWatcher serves a list from memory, then a watch of the given
// events, after which the watch stays open. Reflectors list and watch (it
// does not do WatchList).
type memoryListerWatcher struct {
	list   runtime.Object
	events []watch.Event
}

func (lw *memoryListerWatcher) IsWatchListSemanticsUnSupported() bool { return true }

func (lw *memoryListerWatcher) List(metav1.ListOptions) (runtime.Object, error) {
	return lw.list.DeepCopyObject(), nil
}

func (lw *memoryListerWatcher) ListWithContext(_ context.Context, o metav1.ListOptions) (runtime.Object, error) {
	return lw.List(o)
}

func (lw *memoryListerWatcher) Watch(metav1.ListOptions) (watch.Interface, error) {
	return newReplayWatch(lw.events), nil
}

func (lw *memoryListerWatcher) WatchWithContext(_ context.Context, o metav1.ListOptions) (watch.Interface, error) {
	return lw.Watch(o)
}

// replayWatch sends its events, then nothing until stopped.
type replayWatch struct {
	result   chan watch.Event
	stopped  chan struct{}
	stopOnce sync.Once
}

func newReplayWatch(events []watch.Event) *replayWatch {
	w := &replayWatch{result: make(chan watch.Event, 1024), stopped: make(chan struct{})}
	go func() {
		for _, e := range events {
			select {
			case w.result <- e:
			case <-w.stopped:
				return
			}
		}
	}()
	return w
}

func (w *replayWatch) ResultChan() <-chan watch.Event { return w.result }
func (w *replayWatch) Stop()                          { w.stopOnce.Do(func() { close(w.stopped) }) }
