package compact

import (
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
)

func realisticPod(t testing.TB, i int) *corev1.Pod {
	t.Helper()
	data, err := os.ReadFile("../../testdata/realistic-pod.json")
	if err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{}
	if err := json.Unmarshal(data, pod); err != nil {
		t.Fatal(err)
	}
	pod.Name = fmt.Sprintf("%s%05d", pod.GenerateName, i)
	pod.UID = types.UID(fmt.Sprintf("00000000-0000-0000-0000-%012d", i))
	pod.ResourceVersion = fmt.Sprint(1000 + i)
	pod.Status.PodIP = fmt.Sprintf("10.1.%d.%d", i/250, i%250)
	return pod
}

func newPod() *corev1.Pod { return &corev1.Pod{} }

// TestRecordsDecodeToTheirObjects makes Records of objects and requires
// each to decode to an object equal to the one it was made of, metadata,
// TypeMeta and all, whether kept decoded or decoded anew.
func TestRecordsDecodeToTheirObjects(t *testing.T) {
	cases := []struct {
		name    string
		objects func(t *testing.T) []runtime.Object
	}{
		{"realistic pods", func(t *testing.T) []runtime.Object {
			return []runtime.Object{realisticPod(t, 1), realisticPod(t, 2), realisticPod(t, 3)}
		}},
		{"configmaps with TypeMeta", func(t *testing.T) []runtime.Object {
			return []runtime.Object{
				&corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "ns", Labels: map[string]string{"x": "y"}}, Data: map[string]string{"k": "v"}},
				&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "b"}},
			}
		}},
		{"partial object metadata", func(t *testing.T) []runtime.Object {
			return []runtime.Object{&metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"}, ObjectMeta: metav1.ObjectMeta{Name: "d", Namespace: "ns", UID: "u", ResourceVersion: "7"}}}
		}},
	}
	for _, c := range cases {
		for _, decoded := range []int{0, 1, 10} {
			t.Run(fmt.Sprintf("%s/decoded=%d", c.name, decoded), func(t *testing.T) {
				objects := c.objects(t)
				codec, err := newCodecOf(objects[0], decoded)
				if err != nil {
					t.Fatal(err)
				}
				var records []*Record
				for _, obj := range objects {
					r, err := codec.compact(obj)
					if err != nil {
						t.Fatal(err)
					}
					records = append(records, r)
				}
				for i, r := range records {
					got, err := codec.decode(r)
					if err != nil {
						t.Fatal(err)
					}
					if diff := cmp.Diff(objects[i], got); diff != "" {
						t.Errorf("object %d decoded (-made of +decoded):\n%s", i, diff)
					}
					m := objects[i].(metav1.Object)
					gotMeta := []any{r.GetNamespace(), r.GetName(), r.GetLabels(), r.GetResourceVersion(), r.GetUID()}
					wantMeta := []any{m.GetNamespace(), m.GetName(), m.GetLabels(), m.GetResourceVersion(), m.GetUID()}
					if diff := cmp.Diff(wantMeta, gotMeta); diff != "" {
						t.Errorf("record %d metadata (-want +got):\n%s", i, diff)
					}
				}
			})
		}
	}
}

// anyCodec is a Codec of one of the test's types.
type anyCodec struct {
	compact func(runtime.Object) (*Record, error)
	decode  func(*Record) (runtime.Object, error)
}

func newCodecOf(example runtime.Object, decoded int) (anyCodec, error) {
	switch example.(type) {
	case *corev1.Pod:
		return codecOf(newPod, decoded)
	case *corev1.ConfigMap:
		return codecOf(func() *corev1.ConfigMap { return &corev1.ConfigMap{} }, decoded)
	case *metav1.PartialObjectMetadata:
		return codecOf(func() *metav1.PartialObjectMetadata { return &metav1.PartialObjectMetadata{} }, decoded)
	}
	return anyCodec{}, fmt.Errorf("no codec of %T", example)
}

func codecOf[T runtime.Object](newT func() T, decoded int) (anyCodec, error) {
	c, err := NewCodec(newT, decoded)
	if err != nil {
		return anyCodec{}, err
	}
	return anyCodec{
		compact: func(obj runtime.Object) (*Record, error) { return c.Compact(obj.(T)) },
		decode:  func(r *Record) (runtime.Object, error) { return c.Decode(r) },
	}, nil
}

// TestDecodedObjectsBounded reads Records through a Codec that keeps two
// decoded objects: the two read last are the same objects at the next
// read; an older one is decoded anew, equal.
func TestDecodedObjectsBounded(t *testing.T) {
	codec, err := NewCodec(newPod, 2)
	if err != nil {
		t.Fatal(err)
	}
	var records []*Record
	var made []*corev1.Pod
	for i := range 3 {
		pod := realisticPod(t, i)
		r, err := codec.Compact(pod)
		if err != nil {
			t.Fatal(err)
		}
		records, made = append(records, r), append(made, pod)
	}
	same := map[int]bool{}
	for i := 2; i >= 0; i-- { // newest first: a miss drops the least recently read
		got, err := codec.Decode(records[i])
		if err != nil {
			t.Fatal(err)
		}
		same[i] = got == made[i]
		if diff := cmp.Diff(made[i], got); diff != "" {
			t.Errorf("pod %d (-made +read):\n%s", i, diff)
		}
	}
	// Pods 2 and 1 were kept as they were made; pod 0 was dropped when
	// pod 2 was made.
	if diff := cmp.Diff(map[int]bool{0: false, 1: true, 2: true}, same); diff != "" {
		t.Errorf("read the object it was made of (-want +got):\n%s", diff)
	}
}

// TestObjectDecodesTombstones requires Object to decode a Record and a
// tombstone that holds one, and to leave anything else alone.
func TestObjectDecodesTombstones(t *testing.T) {
	codec, err := NewCodec(newPod, 0)
	if err != nil {
		t.Fatal(err)
	}
	pod := realisticPod(t, 1)
	r, err := codec.Compact(pod)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		in, out any
	}{
		{"a record", r, pod},
		{"a tombstone of a record", cache.DeletedFinalStateUnknown{Key: "k", Obj: r}, cache.DeletedFinalStateUnknown{Key: "k", Obj: pod}},
		{"an object", pod, pod},
		{"a tombstone of an object", cache.DeletedFinalStateUnknown{Key: "k", Obj: pod}, cache.DeletedFinalStateUnknown{Key: "k", Obj: pod}},
		{"nil", nil, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := codec.Object(c.in)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(c.out, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestSupports names why a type cannot be kept compact.
func TestSupports(t *testing.T) {
	cases := []struct {
		name string
		err  error
	}{
		{"a k8s.io/api type", Supports(newPod)},
		{"partial object metadata", Supports(func() *metav1.PartialObjectMetadata { return &metav1.PartialObjectMetadata{} })},
		{"unstructured", Supports(func() *unstructured.Unstructured { return &unstructured.Unstructured{} })},
		{"no constructor", Supports[*corev1.Pod](nil)},
	}
	got := map[string]string{}
	for _, c := range cases {
		got[c.name] = fmt.Sprint(c.err)
	}
	want := map[string]string{
		"a k8s.io/api type":       "<nil>",
		"partial object metadata": "<nil>",
		"unstructured":            "*unstructured.Unstructured has no protobuf encoding (Marshal and Unmarshal methods, as k8s.io/api's types have)",
		"no constructor":          "the type has no constructor (it is not a pointer to a struct)",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if _, err := NewCodec(newPod, -1); err == nil {
		t.Error("NewCodec with -1 decoded objects: no error")
	}
}

// TestDecodeConcurrently reads Records from several goroutines at once,
// through a Codec that keeps one decoded object: the race detector holds
// its buffers and its decoded objects to their locks.
func TestDecodeConcurrently(t *testing.T) {
	codec, err := NewCodec(newPod, 1)
	if err != nil {
		t.Fatal(err)
	}
	var records []*Record
	var want []*corev1.Pod
	for i := range 4 {
		pod := realisticPod(t, i)
		r, err := codec.Compact(pod)
		if err != nil {
			t.Fatal(err)
		}
		records, want = append(records, r), append(want, pod)
	}
	var wg sync.WaitGroup
	diffs := make([]string, 4)
	for g := range 4 {
		wg.Go(func() {
			for i := range 50 {
				got, err := codec.Decode(records[(g+i)%4])
				if err != nil {
					diffs[g] = err.Error()
					return
				}
				if diff := cmp.Diff(want[(g+i)%4], got); diff != "" {
					diffs[g] = diff
					return
				}
			}
		})
	}
	wg.Wait()
	if diff := cmp.Diff(make([]string, 4), diffs); diff != "" {
		t.Errorf("concurrent reads:\n%s", diff)
	}
}

// TestObjectOfABrokenRecord: a Record that does not decode is an error,
// and a tombstone of one still comes back, with no object, so that its
// delete can be delivered.
func TestObjectOfABrokenRecord(t *testing.T) {
	codec, err := NewCodec(newPod, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := codec.Compact(realisticPod(t, 1)); err != nil { // the dictionary
		t.Fatal(err)
	}
	broken := &Record{namespace: "ns", name: "broken", data: []byte{0xff, 0xff}}
	type outcome struct {
		Obj   any
		Error bool
	}
	got := map[string]outcome{}
	obj, err := codec.Object(broken)
	got["record"] = outcome{obj, err != nil}
	obj, err = codec.Object(cache.DeletedFinalStateUnknown{Key: "ns/broken", Obj: broken})
	got["tombstone"] = outcome{obj, err != nil}
	want := map[string]outcome{
		"record":    {nil, true},
		"tombstone": {cache.DeletedFinalStateUnknown{Key: "ns/broken"}, true},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
