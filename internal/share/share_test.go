package share

import (
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"sync"
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

// podFixture is testdata/realistic-pod.json: a Pod of a Deployment as the embedded
// API server served it (three containers, kubelet status, the managedFields
// of kube-controller-manager and of the kubelet; see
// docs/profiles/typed-cache-accounting.md).
func podFixture(t testing.TB) *corev1.Pod {
	t.Helper()
	data, err := os.ReadFile("../../testdata/realistic-pod.json")
	if err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{}
	if err := json.Unmarshal(data, pod); err != nil {
		t.Fatal(err)
	}
	return pod
}

// replica makes Pod i of the fixture's ReplicaSet: what differs between
// the Pods of one ReplicaSet (name, uid, resourceVersion, IP, container
// IDs, the kubelet's fieldsV1 that names the IP) differs.
func replica(fixture *corev1.Pod, i int) *corev1.Pod {
	pod := fixture.DeepCopy()
	pod.Name = fmt.Sprintf("%s%05d", pod.GenerateName, i)
	pod.UID = types.UID(fmt.Sprintf("00000000-0000-0000-0000-%012d", i))
	pod.ResourceVersion = fmt.Sprint(1000 + i)
	ip := fmt.Sprintf("10.1.%d.%d", i/250, i%250)
	pod.Status.PodIP, pod.Status.PodIPs = ip, []corev1.PodIP{{IP: ip}}
	for c := range pod.Status.ContainerStatuses {
		pod.Status.ContainerStatuses[c].ContainerID = fmt.Sprintf("containerd://%064d", i*10+c)
	}
	for m := range pod.ManagedFields {
		if pod.ManagedFields[m].Manager == "kubelet" {
			pod.ManagedFields[m].FieldsV1 = metav1.NewFieldsV1(fmt.Sprintf(`{"f:status":{"f:podIPs":{"k:{\"ip\":\"%s\"}":{}}}}`, ip))
		}
	}
	return pod
}

// otherDeployment makes a Pod of another Deployment: other labels, owner,
// images and requests.
func otherDeployment(fixture *corev1.Pod, i int) *corev1.Pod {
	pod := replica(fixture, i)
	pod.Labels = map[string]string{"app": "other", "pod-template-hash": "abc"}
	pod.Spec.Containers[0].Image = "registry.example/other:v2"
	pod.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m")}
	return pod
}

// decoded encodes obj as protobuf and decodes it into a new object, as a
// typed informer's decoder does.
func decoded[T interface {
	runtime.Object
	Marshal() ([]byte, error)
	Unmarshal([]byte) error
}](t testing.TB, obj T, fresh func() T) T {
	t.Helper()
	data, err := obj.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	out := fresh()
	if err := out.Unmarshal(data); err != nil {
		t.Fatal(err)
	}
	return out
}

func newPod() *corev1.Pod { return &corev1.Pod{} }

// node is a recursive type, as a CRD's JSONSchemaProps is.
type node struct {
	Name     string
	Children []node
	Next     *node
	Props    map[string]string
	Ignored  map[string]node
}

// undecodable is shaped as generic.Undecodable, which a typed list holds in
// the place of an item that did not decode: an error in an interface.
type undecodable struct {
	metav1.TypeMeta
	Name string
	Raw  []byte
	Err  error
}

func (u *undecodable) DeepCopyObject() runtime.Object { c := *u; return &c }

// TestObjectKeepsObjectsEqual walks objects made and decoded alike and
// requires each to be equal (cmp.Diff and reflect.DeepEqual) to the same
// object decoded and not walked, with sharing of maps on and off.
func TestObjectKeepsObjectsEqual(t *testing.T) {
	fixture := podFixture(t)
	cases := []struct {
		name string
		// objects returns the objects to walk, in order, made anew at
		// each call.
		objects func(t *testing.T) []any
	}{
		{"pods of one ReplicaSet", func(t *testing.T) []any {
			var out []any
			for i := range 5 {
				out = append(out, decoded(t, replica(fixture, i), newPod))
			}
			return out
		}},
		{"pods of two Deployments in turn", func(t *testing.T) []any {
			var out []any
			for i := range 6 {
				if i%2 == 0 {
					out = append(out, decoded(t, replica(fixture, i), newPod))
				} else {
					out = append(out, decoded(t, otherDeployment(fixture, i), newPod))
				}
			}
			return out
		}},
		{"a PodList", func(t *testing.T) []any {
			list := &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "77"}}
			for i := range 4 {
				list.Items = append(list.Items, *replica(fixture, i))
			}
			return []any{decoded(t, list, func() *corev1.PodList { return &corev1.PodList{} })}
		}},
		{"a list of runtime.Objects", func(t *testing.T) []any {
			list := &metainternalversion.List{}
			for i := range 3 {
				pod := decoded(t, replica(fixture, i), newPod)
				pod.APIVersion, pod.Kind = "v1", "Pod" // as items of a list decoded per item have
				list.Items = append(list.Items, pod)
			}
			list.Items = append(list.Items, nil)
			return []any{list}
		}},
		{"configmaps with payloads of their own", func(t *testing.T) []any {
			var out []any
			for i := range 4 {
				cm := &corev1.ConfigMap{
					ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint("cm-", i), Namespace: "ns", Labels: map[string]string{"app": "a"}},
					Data:       map[string]string{"payload": fmt.Sprintf("%01000d", i), "mode": "on"},
				}
				out = append(out, decoded(t, cm, func() *corev1.ConfigMap { return &corev1.ConfigMap{} }))
			}
			return out
		}},
		{"quantities too large for int64", func(t *testing.T) []any {
			var out []any
			for range 3 {
				pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{"example.com/huge": resource.MustParse("1e100"), corev1.ResourceCPU: resource.MustParse("1")},
				}}}}}
				out = append(out, decoded(t, pod, newPod))
			}
			return out
		}},
		{"empty and nil objects", func(t *testing.T) []any {
			return []any{&corev1.Pod{}, (*corev1.Pod)(nil), nil, corev1.Pod{}, &corev1.PodList{}}
		}},
		{"an error holding a reflect.Type, as a list's undecodable item does", func(t *testing.T) []any {
			var out []any
			for range 3 {
				out = append(out, &undecodable{Name: "broken", Err: &json.UnmarshalTypeError{Value: "string", Type: reflect.TypeFor[int32](), Field: "spec.size"}})
			}
			return []any{&metainternalversion.List{Items: []runtime.Object{out[0].(*undecodable), out[1].(*undecodable)}}, out[2]}
		}},
		{"a recursive type", func(t *testing.T) []any {
			var out []any
			for range 3 {
				n := &node{Name: "root", Props: map[string]string{"type": "object"}, Ignored: map[string]node{"x": {Name: "x"}},
					Children: []node{{Name: "a", Next: &node{Name: "b", Props: map[string]string{"type": "string"}}}}}
				out = append(out, n)
			}
			return out
		}},
	}
	for _, c := range cases {
		for _, maps := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/maps=%v", c.name, maps), func(t *testing.T) {
				want, got := c.objects(t), c.objects(t)
				s := New(maps)
				for _, obj := range got {
					s.Object(obj)
				}
				if diff := cmp.Diff(want, got, cmp.AllowUnexported(node{}), cmp.Comparer(func(a, b reflect.Type) bool { return a == b })); diff != "" {
					t.Errorf("walked objects differ (-want +got):\n%s", diff)
				}
				if !reflect.DeepEqual(want, got) {
					t.Error("walked objects are not reflect.DeepEqual to the objects not walked")
				}
			})
		}
	}
}

// TestObjectShares walks Pods of one ReplicaSet and one of another
// Deployment, and says what the last of the ReplicaSet's shares with the one
// before it, and what the other Deployment's shares with it.
func TestObjectShares(t *testing.T) {
	fixture := podFixture(t)
	type shared struct {
		Namespace, Image, ServiceAccountMount bool
		Labels, Requests, ControllerFieldsV1  bool
		KubeletFieldsV1                       bool
		OtherDeploymentLabels                 bool
		OtherDeploymentNamespace              bool
		// Slices and pointed-to structs of flat values (flat.go).
		OwnerReferences, Tolerations, Env, Probe bool
		OtherDeploymentEnvoyEnv                  bool
	}
	cases := []struct {
		maps bool
		want shared
	}{
		{maps: true, want: shared{
			Namespace: true, Image: true, ServiceAccountMount: true, Labels: true, Requests: true, ControllerFieldsV1: true, OtherDeploymentNamespace: true,
			OwnerReferences: true, Tolerations: true, Env: true, Probe: true, OtherDeploymentEnvoyEnv: true,
		}},
		// Interned FieldsV1 (apimachinery v0.38's default) are shared
		// whatever the Sharer does.
		{maps: false, want: shared{Namespace: true, Image: true, ServiceAccountMount: true, ControllerFieldsV1: !fieldsV1HasRaw, OtherDeploymentNamespace: true}},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("maps=%v", c.maps), func(t *testing.T) {
			s := New(c.maps)
			// A value is shared from its second sighting on, unless two
			// others of its pair of candidate slots push it out in
			// between: the ReplicaSet's first Pods are walked first, so
			// that every value has met its chances before the two
			// compared.
			for i := 10; i < 16; i++ {
				s.Object(decoded(t, replica(fixture, i), newPod))
			}
			pods := []*corev1.Pod{
				decoded(t, replica(fixture, 1), newPod), decoded(t, replica(fixture, 2), newPod),
				decoded(t, replica(fixture, 3), newPod), decoded(t, otherDeployment(fixture, 4), newPod),
			}
			for _, pod := range pods {
				s.Object(pod)
			}
			b, a, other := pods[2], pods[1], pods[3]
			fieldsV1 := func(p *corev1.Pod, manager string) unsafe.Pointer {
				for _, e := range p.ManagedFields {
					if e.Manager == manager {
						return fieldsV1Data(e.FieldsV1)
					}
				}
				t.Fatalf("no managedFields entry of %s", manager)
				return nil
			}
			got := shared{
				Namespace:                sameString(a.Namespace, b.Namespace),
				Image:                    sameString(a.Spec.Containers[1].Image, b.Spec.Containers[1].Image),
				ServiceAccountMount:      sameString(a.Spec.Containers[0].VolumeMounts[len(a.Spec.Containers[0].VolumeMounts)-1].MountPath, b.Spec.Containers[0].VolumeMounts[len(b.Spec.Containers[0].VolumeMounts)-1].MountPath),
				Labels:                   sameMap(a.Labels, b.Labels),
				Requests:                 sameMap(a.Spec.Containers[0].Resources.Requests, b.Spec.Containers[0].Resources.Requests),
				ControllerFieldsV1:       fieldsV1(a, "kube-controller-manager") == fieldsV1(b, "kube-controller-manager"),
				KubeletFieldsV1:          fieldsV1(a, "kubelet") == fieldsV1(b, "kubelet"),
				OtherDeploymentLabels:    sameMap(b.Labels, other.Labels),
				OtherDeploymentNamespace: sameString(b.Namespace, other.Namespace),
				OwnerReferences:          sameSlice(a.OwnerReferences, b.OwnerReferences),
				Tolerations:              sameSlice(a.Spec.Tolerations, b.Spec.Tolerations),
				Env:                      sameSlice(a.Spec.Containers[0].Env, b.Spec.Containers[0].Env),
				Probe:                    a.Spec.Containers[0].LivenessProbe != nil && a.Spec.Containers[0].LivenessProbe == b.Spec.Containers[0].LivenessProbe,
				OtherDeploymentEnvoyEnv:  sameSlice(b.Spec.Containers[1].Env, other.Spec.Containers[1].Env),
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("what is shared (-want +got):\n%s", diff)
			}
		})
	}
}

func sameString(a, b string) bool { return len(a) > 0 && unsafe.StringData(a) == unsafe.StringData(b) }

// fieldsV1Data is where a FieldsV1's serialized fields are: its Raw bytes
// (apimachinery's fieldsv1byte build tag) or its interned string
// (apimachinery v0.38's default, a unique.Handle[string], which the Go
// runtime shares), so that two that share them say the same.
func fieldsV1Data(f *metav1.FieldsV1) unsafe.Pointer {
	if f == nil {
		return nil
	}
	if fieldsV1HasRaw {
		return unsafe.Pointer(unsafe.SliceData(f.GetRawBytes()))
	}
	return unsafe.Pointer(unsafe.StringData(f.GetRawString()))
}

// fieldsV1HasRaw: FieldsV1 holds bytes (the fieldsv1byte build tag), which
// the Sharer shares itself; otherwise apimachinery interns them.
var fieldsV1HasRaw = func() bool {
	_, ok := reflect.TypeFor[metav1.FieldsV1]().FieldByName("Raw")
	return ok
}()

func sameSlice[S ~[]E, E any](a, b S) bool {
	return len(a) > 0 && unsafe.SliceData(a) == unsafe.SliceData(b)
}

func sameMap[M ~map[K]V, K comparable, V any](a, b M) bool {
	return len(a) > 0 && reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

// TestObjectConcurrently walks Pods from several goroutines at once: the
// race detector holds the Sharer's tables to its lock, and the objects
// stay equal.
func TestObjectConcurrently(t *testing.T) {
	fixture := podFixture(t)
	s := New(true)
	const goroutines, perGoroutine = 4, 20
	var wg sync.WaitGroup
	diffs := make([]string, goroutines)
	for g := range goroutines {
		wg.Go(func() {
			for i := range perGoroutine {
				want := replica(fixture, g*perGoroutine+i)
				got := decoded(t, want, newPod)
				s.Object(got)
				if diff := cmp.Diff(decoded(t, want, newPod), got); diff != "" && diffs[g] == "" {
					diffs[g] = diff
				}
			}
		})
	}
	wg.Wait()
	if diff := cmp.Diff(make([]string, goroutines), diffs); diff != "" {
		t.Errorf("objects walked concurrently differ from their decoded copies:\n%s", diff)
	}
}

// TestTablesBounded meets many distinct values twice each and requires
// every table to stay within its bound.
func TestTablesBounded(t *testing.T) {
	s := New(true)
	for i := range 2 * MaxStrings {
		for range 2 {
			cm := &corev1.ConfigMap{Data: map[string]string{"k": fmt.Sprint("value-", i)}}
			cm.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: fmt.Sprint("m-", i), FieldsV1: metav1.NewFieldsV1(fmt.Sprintf(`{"f:%d":{}}`, i))}}
			s.Object(cm)
		}
	}
	got := map[string]bool{
		"strings": len(s.strings) <= MaxStrings, "fieldsV1": len(s.fieldsV1) <= MaxFieldsV1, "maps": len(s.sharedMaps) <= MaxMaps, "flat": len(s.flat) <= MaxFlat,
		"some strings shared": len(s.strings) > 0, "some maps shared": len(s.sharedMaps) > 0, "some fieldsV1 shared": len(s.fieldsV1) > 0, "some flat values shared": len(s.flat) > 0,
	}
	// Interned FieldsV1 (apimachinery v0.38's default) are shared by the Go
	// runtime: the Sharer keeps no table of them.
	want := map[string]bool{"strings": true, "fieldsV1": true, "maps": true, "flat": true, "some strings shared": true, "some maps shared": true, "some fieldsV1 shared": fieldsV1HasRaw, "some flat values shared": true}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tables (-want +got):\n%s", diff)
	}
}

// TestQuantityLayoutKnown holds the mirror of resource.Quantity to
// apimachinery's layout: if it ever changes, quantities stop being shared,
// and this test says so.
func TestQuantityLayoutKnown(t *testing.T) {
	if !quantityLayoutKnown {
		t.Fatal("resource.Quantity's layout is not quantityMirror's: ResourceLists are not shared")
	}
	cases := []struct {
		a, b string
		want bool
	}{
		{"1", "1", true}, {"1", "1000m", false}, {"100Mi", "100Mi", true}, {"1Gi", "1G", false}, {"0", "0", true},
	}
	for _, c := range cases {
		if got := identicalQuantities(resource.MustParse(c.a), resource.MustParse(c.b)); got != c.want {
			t.Errorf("identicalQuantities(%s, %s) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}
