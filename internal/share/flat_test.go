package share

import (
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// flatFields is a flat struct with one field of each kind a key tells
// apart.
type flatFields struct {
	A, B   string
	N      int32
	On     *bool
	Tags   []string
	Time   *metav1.Time
	Q      *resource.Quantity
	Port   intstr.IntOrString
	hidden int
}

// sameLayout has flatFields' first fields: a key of one is never a key of
// the other.
type sameLayout struct {
	A, B string
}

// keyOf returns the key the Sharer gives the flat value v (a pointer to
// it), or false if its type is not flat.
func keyOf(v any) (string, bool) {
	planning.Lock()
	defer planning.Unlock()
	t := reflect.TypeOf(v).Elem()
	f := flatSharerOf(t)
	if f == nil {
		return "", false
	}
	return string(f.key(append([]byte(nil), f.tag...), reflect.ValueOf(v).UnsafePointer())), true
}

// TestFlatKeys requires equal keys of values that are equal
// (reflect.DeepEqual) and different keys of values that are not, and no key
// of a type that is not flat.
func TestFlatKeys(t *testing.T) {
	yes := true
	no := false
	now := metav1.NewTime(time.Unix(1700000000, 0))
	later := metav1.NewTime(time.Unix(1700000001, 0))
	utc := metav1.NewTime(time.Unix(1700000000, 0).UTC())
	base := func() *flatFields {
		return &flatFields{A: "ab", B: "c", N: 1, On: &yes, Tags: []string{"x"}, Time: &now, Q: new(resource.MustParse("1Gi")), Port: intstr.FromInt32(80)}
	}
	cases := []struct {
		name   string
		a, b   any
		differ bool
	}{
		{"equal values, memory of their own", base(), base(), false},
		{"strings split elsewhere", base(), func() *flatFields { f := base(); f.A, f.B = "a", "bc"; return f }(), true},
		{"a number", base(), func() *flatFields { f := base(); f.N = 2; return f }(), true},
		{"a pointer nil", base(), func() *flatFields { f := base(); f.On = nil; return f }(), true},
		{"a pointed-to value", base(), func() *flatFields { f := base(); f.On = &no; return f }(), true},
		{"a nil slice and an empty one", &flatFields{}, &flatFields{Tags: []string{}}, true},
		{"a slice's element", base(), func() *flatFields { f := base(); f.Tags = []string{"y"}; return f }(), true},
		{"a slice's length", base(), func() *flatFields { f := base(); f.Tags = []string{"x", ""}; return f }(), true},
		{"a time", base(), func() *flatFields { f := base(); f.Time = &later; return f }(), true},
		{"the same instant in another location", base(), func() *flatFields { f := base(); f.Time = &utc; return f }(), true},
		{"a quantity", base(), func() *flatFields { f := base(); f.Q = new(resource.MustParse("2Gi")); return f }(), true},
		{"an int or string", base(), func() *flatFields { f := base(); f.Port = intstr.FromString("80"); return f }(), true},
		{"an unexported field", base(), func() *flatFields { f := base(); f.hidden = 1; return f }(), true},
		{"two types of the same content", &sameLayout{A: "ab", B: "c"}, &flatFields{A: "ab", B: "c"}, true},
		{"tolerations", &[]corev1.Toleration{{Key: "k", TolerationSeconds: new(int64(300))}}, &[]corev1.Toleration{{Key: "k", TolerationSeconds: new(int64(300))}}, false},
		{"toleration seconds", &[]corev1.Toleration{{Key: "k", TolerationSeconds: new(int64(300))}}, &[]corev1.Toleration{{Key: "k", TolerationSeconds: new(int64(301))}}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ka, okA := keyOf(c.a)
			kb, okB := keyOf(c.b)
			if !okA || !okB {
				t.Fatalf("no key: flat %v, %v", okA, okB)
			}
			equal := reflect.DeepEqual(c.a, c.b)
			got := map[string]bool{"keys differ": ka != kb, "values differ": !equal}
			want := map[string]bool{"keys differ": c.differ, "values differ": c.differ}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	for _, notFlat := range []any{&corev1.Container{}, &corev1.Pod{}, &map[string]string{}, &struct{ Err error }{}} {
		if _, ok := keyOf(notFlat); ok {
			t.Errorf("%T has a key; it is not flat (a map or an interface in it)", notFlat)
		}
	}
}

// TestFlatSharingOfRandomValues shares random Tolerations slices and
// requires each object to stay equal to its copy and to share its slice
// only with an equal one.
func TestFlatSharingOfRandomValues(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	pick := func(options ...string) string { return options[r.IntN(len(options))] }
	s := New(true)
	var pods, copies []*corev1.Pod
	for range 2000 {
		pod := &corev1.Pod{}
		for range r.IntN(3) {
			tol := corev1.Toleration{Key: pick("a", "b"), Operator: corev1.TolerationOperator(pick("Exists", "Equal")), Effect: corev1.TaintEffect(pick("", "NoExecute"))}
			if r.IntN(2) == 0 {
				tol.TolerationSeconds = new(int64(r.IntN(2)))
			}
			pod.Spec.Tolerations = append(pod.Spec.Tolerations, tol)
		}
		copies = append(copies, pod.DeepCopy())
		s.Object(pod)
		pods = append(pods, pod)
	}
	if diff := cmp.Diff(copies, pods); diff != "" {
		t.Fatalf("walked pods differ from their copies (-want +got):\n%s", diff)
	}
	shared := 0
	byArray := map[unsafe.Pointer]int{}
	for i, pod := range pods {
		if len(pod.Spec.Tolerations) == 0 {
			continue
		}
		data := unsafe.Pointer(unsafe.SliceData(pod.Spec.Tolerations))
		if j, ok := byArray[data]; ok {
			shared++
			if !reflect.DeepEqual(copies[i].Spec.Tolerations, copies[j].Spec.Tolerations) {
				t.Fatalf("pods %d and %d share tolerations that differ:\n%s", j, i, cmp.Diff(copies[j].Spec.Tolerations, copies[i].Spec.Tolerations))
			}
			continue
		}
		byArray[data] = i
	}
	if shared == 0 {
		t.Fatal("no tolerations shared: the test proves nothing")
	}
	t.Logf("%d of %d pods share their tolerations", shared, len(pods))
}

// TestLargeValuesKeepNoBuffer shares a Pod with a long list of env vars
// (a key far over MaxFlatKeyBytes): it is not shared, and the Sharer keeps
// no buffer of its size for the next key.
func TestLargeValuesKeepNoBuffer(t *testing.T) {
	s := New(true)
	pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c"}}}}
	for i := range 1000 {
		pod.Spec.Containers[0].Env = append(pod.Spec.Containers[0].Env, corev1.EnvVar{Name: strings.Repeat("n", 20) + strconv.Itoa(i), Value: "v"})
	}
	s.Object(pod)
	if got := cap(s.keyBuf); got > 4*MaxFlatKeyBytes {
		t.Errorf("the Sharer keeps a key buffer of %d bytes after a large value; want at most %d", got, 4*MaxFlatKeyBytes)
	}
}
