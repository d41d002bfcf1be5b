package generic_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/internal/widget"
)

// payloadConfigMap is namedConfigMap with a payload of n bytes, so that
// each state of an object has an encoded size of its own.
func payloadConfigMap(name, rv string, n int) *unstructured.Unstructured {
	cm := namedConfigMap(name, rv)
	cm.Object["data"] = map[string]any{"payload": strings.Repeat("x", n)}
	return cm
}

// jsonBytes is the length of each object's JSON encoding, added up: what
// EncodedBytes must say of unstructured objects.
func jsonBytes(t *testing.T, objs ...any) int64 {
	t.Helper()
	var n int64
	for _, obj := range objs {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			t.Fatalf("a %T in the cache", obj)
		}
		data, err := json.Marshal(u.Object)
		if err != nil {
			t.Fatal(err)
		}
		n += int64(len(data))
	}
	return n
}

// errBadLabel rejects, in the transform, objects labelled bad.
var errBadLabel = errors.New("labelled bad")

func rejectBad(obj any) (any, error) {
	if obj.(metav1.Object).GetLabels()["bad"] != "" {
		return nil, errBadLabel
	}
	return obj, nil
}

// TestEncodedBytesFollowsTheCache: the encoded-bytes gauge is the sum of
// the JSON encodings' lengths of the objects the informer's cache holds
// once the handlers have had the events, through watch events that change
// an object's size, objects that are rejected or deleted unseen, an object
// kept at its last good state, relists that drop and change objects, and
// a resource that is no longer served.
func TestEncodedBytesFollowsTheCache(t *testing.T) {
	bad := payloadConfigMap("a", "12", 5000)
	bad.SetLabels(map[string]string{"bad": "yes"})
	tests := []struct {
		name  string
		lists []*unstructured.UnstructuredList
		gone  bool
		// events are sent on the first watch; nil events expire it.
		events []watch.Event
		// lines are the handler's lines to wait for after the first sync;
		// stale, how many objects to wait for to be stale.
		lines []string
		stale int
		// objects is how many objects the cache holds at the end.
		objects int
	}{{
		name:    "initial list",
		lists:   []*unstructured.UnstructuredList{unstructuredList("10", payloadConfigMap("a", "1", 10), payloadConfigMap("b", "2", 100), payloadConfigMap("c", "3", 1000))},
		objects: 3,
	}, {
		name:  "watch events: a grows, a rejected object, deletes of one held and of one never seen",
		lists: []*unstructured.UnstructuredList{unstructuredList("10", payloadConfigMap("a", "1", 10), payloadConfigMap("b", "2", 20))},
		events: []watch.Event{
			{Type: watch.Modified, Object: payloadConfigMap("a", "11", 3000)},
			{Type: watch.Added, Object: payloadConfigMap("", "12", 50)},
			{Type: watch.Deleted, Object: payloadConfigMap("b", "13", 20)},
			{Type: watch.Deleted, Object: payloadConfigMap("x", "14", 70)},
			{Type: watch.Added, Object: payloadConfigMap("c", "15", 400)},
		},
		lines:   []string{"update default/a", "delete default/b", "delete default/x", "add default/c"},
		objects: 2,
	}, {
		name:    "an update that does not transform keeps the last good state, and its size",
		lists:   []*unstructured.UnstructuredList{unstructuredList("10", payloadConfigMap("a", "1", 10), payloadConfigMap("b", "2", 20))},
		events:  []watch.Event{{Type: watch.Modified, Object: bad}},
		stale:   1,
		objects: 2,
	}, {
		name: "a relist drops one and changes another",
		lists: []*unstructured.UnstructuredList{
			unstructuredList("10", payloadConfigMap("a", "1", 10), payloadConfigMap("b", "2", 20)),
			unstructuredList("20", payloadConfigMap("b", "19", 2000)),
		},
		events:  []watch.Event{{}},
		lines:   []string{"delete tombstone default/a", "update default/b"},
		objects: 1,
	}, {
		name:    "no longer served",
		lists:   []*unstructured.UnstructuredList{unstructuredList("10", payloadConfigMap("a", "1", 10), payloadConfigMap("b", "2", 20))},
		gone:    true,
		events:  []watch.Event{{}},
		lines:   []string{"delete tombstone default/a", "delete tombstone default/b"},
		objects: 0,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			lists := make([]runtime.Object, len(tc.lists))
			for i, list := range tc.lists {
				lists[i] = list
			}
			scripted := newScriptedListerWatcher(lists...)
			var lw cache.ListerWatcher = scripted
			if tc.gone {
				lw = goneAfterScript{scripted}
			}
			provider := &recordingProvider{}
			informer := newInformer[*unstructured.Unstructured](lw, configMapsGVR, nil, generic.WithMetricsProvider(provider),
				generic.WithTransform(rejectBad), generic.WithErrorHandler(func(context.Context, error) {}))
			lines := make(chan string, 100)
			if _, err := informer.Informer().AddEventHandler(eventLog(lines)); err != nil {
				t.Fatal(err)
			}
			stop := runSynced(t, informer)
			defer stop()
			w := scripted.nextWatch(t)
			for _, event := range tc.events {
				if event.Object == nil {
					expire(w)
					continue
				}
				w.Action(event.Type, event.Object)
			}
			waitForLines(t, lines, tc.lines...)
			waitForStaleCount(t, informer, tc.stale)

			cached := informer.Informer().GetStore().List()
			want := fmt.Sprintf("%d objects, %d bytes", tc.objects, jsonBytes(t, cached...))
			got := fmt.Sprintf("%d objects, %d bytes", len(cached), provider.only(t).gauges.EncodedBytes())
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("encoded bytes of the cache (-want +got):\n%s", diff)
			}
		})
	}
}

// waitForStaleCount waits until the informer holds n stale objects.
func waitForStaleCount(t *testing.T, informer interface{ Status() generic.Status }, n int) {
	t.Helper()
	if n == 0 {
		return
	}
	err := wait.PollUntilContextTimeout(t.Context(), time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		return informer.Status().Stale == n, nil
	})
	if err != nil {
		t.Fatalf("%d objects stale, want %d", informer.Status().Stale, n)
	}
}

// realisticPods are testdata/realistic-pod.json made into n Pods of their
// own names, their managedFields' fieldsV1 compact as a server sends them
// (the file's are indented, and a FieldsV1 keeps its JSON as it was
// given).
func realisticPods(t testing.TB, n int) []corev1.Pod {
	t.Helper()
	indented, err := os.ReadFile("testdata/realistic-pod.json")
	if err != nil {
		t.Fatal(err)
	}
	var pod corev1.Pod
	if err := json.Unmarshal(indented, &pod); err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(&pod) // compacts the fieldsV1
	if err != nil {
		t.Fatal(err)
	}
	pods := make([]corev1.Pod, n)
	for i := range pods {
		if err := json.Unmarshal(data, &pods[i]); err != nil {
			t.Fatal(err)
		}
		pods[i].Name = fmt.Sprintf("%s%05d", pods[i].GenerateName, i)
		pods[i].ResourceVersion = fmt.Sprint(100 + i)
	}
	return pods
}

// synced runs an informer of T over one list and returns its gauges once
// it has synced.
func synced[T generic.Object](t *testing.T, list runtime.Object, convert generic.Converter[T], opts ...generic.InformerOption) generic.InformerGauges {
	t.Helper()
	provider := &recordingProvider{}
	informer := newInformer(newScriptedListerWatcher(list), configMapsGVR, convert, append(opts, generic.WithMetricsProvider(provider))...)
	stop := runSynced(t, informer)
	t.Cleanup(stop)
	return provider.only(t).gauges
}

// TestEncodedBytesDefinition: what the gauge counts of an object, by its
// Go type and store: the length of its protobuf encoding if its type has
// one, whatever the store, else of its JSON encoding; of the object as
// cached, after the informer's transforms.
func TestEncodedBytesDefinition(t *testing.T) {
	pods := realisticPods(t, 3)
	protobufOf := func(pods []corev1.Pod, edit func(*corev1.Pod)) int64 {
		var n int64
		for _, pod := range pods {
			edit(&pod)
			n += int64(pod.Size())
		}
		return n
	}
	unchanged := func(*corev1.Pod) {}
	podList := func() *corev1.PodList {
		return &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "200"}, Items: realisticPods(t, 3)}
	}
	unstructuredPods := func() (*unstructured.UnstructuredList, int64) {
		list := unstructuredList("200")
		var n int64
		for _, pod := range pods {
			content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&pod)
			if err != nil {
				t.Fatal(err)
			}
			content["apiVersion"], content["kind"] = "v1", "Pod" // as the dynamic client's objects
			data, err := json.Marshal(content)
			if err != nil {
				t.Fatal(err)
			}
			n += int64(len(data))
			list.Items = append(list.Items, unstructured.Unstructured{Object: content})
		}
		return list, n
	}
	widgets := func() (*unstructured.UnstructuredList, int64) {
		objs := load(t, "testdata/widgets.yaml")
		var n int64
		for _, obj := range objs {
			w := &widget.Widget{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, w); err != nil {
				t.Fatal(err)
			}
			data, err := json.Marshal(w)
			if err != nil {
				t.Fatal(err)
			}
			n += int64(len(data))
		}
		return unstructuredList("200", objs...), n
	}
	tests := []struct {
		name string
		// run runs the informer and returns its gauge and what it must say.
		run func(t *testing.T) (got, want int64)
		// perPod is the size of one realistic Pod that docs/metrics.md
		// gives for this view and store; 0 if none.
		perPod int64
	}{
		{"typed Pods: protobuf", func(t *testing.T) (int64, int64) {
			return synced[*corev1.Pod](t, podList(), nil).EncodedBytes(), protobufOf(pods, unchanged)
		}, 9623},
		{"typed Pods in a compact store: the protobuf encoding it compressed", func(t *testing.T) (int64, int64) {
			return synced[*corev1.Pod](t, podList(), nil, generic.WithCompactStore(0)).EncodedBytes(), protobufOf(pods, unchanged)
		}, 9623},
		{"typed Pods, managedFields stripped: as cached", func(t *testing.T) (int64, int64) {
			stripped := protobufOf(pods, func(p *corev1.Pod) { p.ManagedFields = nil })
			return synced[*corev1.Pod](t, podList(), nil, generic.WithStripManagedFields()).EncodedBytes(), stripped
		}, 4285},
		{"metadata only: protobuf", func(t *testing.T) (int64, int64) {
			list := &metav1.PartialObjectMetadataList{ListMeta: metav1.ListMeta{ResourceVersion: "200"}}
			var want int64
			for _, pod := range pods {
				item := metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}, ObjectMeta: pod.ObjectMeta}
				want += int64(item.Size())
				list.Items = append(list.Items, item)
			}
			return synced[*metav1.PartialObjectMetadata](t, list, nil).EncodedBytes(), want
		}, 5587},
		{"unstructured Pods: JSON", func(t *testing.T) (int64, int64) {
			list, want := unstructuredPods()
			return synced[*unstructured.Unstructured](t, list, nil).EncodedBytes(), want
		}, 14111},
		{"a custom resource's Go type, which has no protobuf encoding: JSON", func(t *testing.T) (int64, int64) {
			list, want := widgets()
			return synced(t, list, generic.FromUnstructured[*widget.Widget]()).EncodedBytes(), want
		}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, want := tc.run(t)
			if want == 0 {
				t.Fatal("the fixture has no bytes")
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("encoded bytes (-want +got):\n%s", diff)
			}
			if tc.perPod != 0 {
				if diff := cmp.Diff(tc.perPod, got/int64(len(pods))); diff != "" {
					t.Errorf("bytes per Pod, as docs/metrics.md says (-want +got):\n%s", diff)
				}
			}
		})
	}
}

// TestEncodedBytesAllocatesNothing: a scrape reads the gauge of every
// informer; reading it must cost the same for a cache of any size.
func TestEncodedBytesAllocatesNothing(t *testing.T) {
	const objects = 1000
	items := make([]*unstructured.Unstructured, objects)
	for i := range items {
		items[i] = payloadConfigMap(fmt.Sprintf("cm-%d", i), "1", i)
	}
	encodedBytes := synced[*unstructured.Unstructured](t, unstructuredList("10", items...), nil).EncodedBytes
	got := fmt.Sprintf("%d bytes, %.0f allocations a read", encodedBytes(), testing.AllocsPerRun(100, func() { encodedBytes() }))
	if diff := cmp.Diff(fmt.Sprintf("%d bytes, 0 allocations a read", jsonBytes(t, toAny(items)...)), got); diff != "" {
		t.Errorf("EncodedBytes (-want +got):\n%s", diff)
	}
}

func toAny[T any](objs []T) []any {
	out := make([]any, len(objs))
	for i, obj := range objs {
		out[i] = obj
	}
	return out
}

// BenchmarkEncodedSizeOfAPod: what measuring a typed realistic Pod costs
// at ingest (its protobuf Size), against decoding it, which the ingest
// does anyway (docs/metrics.md).
func BenchmarkEncodedSizeOfAPod(b *testing.B) {
	pod := realisticPods(b, 1)[0]
	data, err := pod.Marshal()
	if err != nil {
		b.Fatal(err)
	}
	b.Run("measure=protobuf-size", func(b *testing.B) {
		for b.Loop() {
			pod.Size()
		}
	})
	b.Run("decode=protobuf", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var decoded corev1.Pod
			if err := decoded.Unmarshal(data); err != nil {
				b.Fatal(err)
			}
		}
	})
}
