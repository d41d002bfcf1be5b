package share

import (
	"fmt"
	"reflect"
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestObjectTrimsSpareCapacity walks decoded objects and lists the slices
// in them that still have spare capacity after the walk: none but a list's
// items, whose array the informer points into and which must stay where it
// is.
func TestObjectTrimsSpareCapacity(t *testing.T) {
	fixture := podFixture(t)
	cases := []struct {
		name string
		// object returns the decoded object to walk, and the address of
		// the first item of its items array (nil if it has none).
		object    func(t *testing.T) (any, unsafe.Pointer)
		wantSlack []string
	}{
		{"a pod", func(t *testing.T) (any, unsafe.Pointer) {
			return decoded(t, replica(fixture, 1), newPod), nil
		}, nil},
		{"a pod list", func(t *testing.T) (any, unsafe.Pointer) {
			list := &corev1.PodList{}
			for i := range 3 {
				list.Items = append(list.Items, *replica(fixture, i))
			}
			out := decoded(t, list, func() *corev1.PodList { return &corev1.PodList{} })
			return out, unsafe.Pointer(&out.Items[0])
		}, []string{".Items"}},
	}
	for _, c := range cases {
		for _, maps := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/maps=%v", c.name, maps), func(t *testing.T) {
				obj, items := c.object(t)
				if before := slackOf(reflect.ValueOf(obj), ""); len(before) == 0 {
					t.Fatal("the decoded object has no spare capacity to trim: the test proves nothing")
				}
				New(maps).Object(obj)
				if diff := cmp.Diff(c.wantSlack, slackOf(reflect.ValueOf(obj), "")); diff != "" {
					t.Errorf("slices with spare capacity after the walk (-want +got):\n%s", diff)
				}
				if items != nil && unsafe.Pointer(reflect.ValueOf(obj).Elem().FieldByName("Items").Index(0).UnsafeAddr()) != items {
					t.Error("the list's items array was copied")
				}
			})
		}
	}
}

// slackOf returns the paths of the slices in v with spare capacity, byte
// slices aside.
func slackOf(v reflect.Value, path string) []string {
	var out []string
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			out = append(out, slackOf(v.Elem(), path)...)
		}
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[metav1.Time]() {
			return nil
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				out = append(out, slackOf(v.Field(i), path+"."+v.Type().Field(i).Name)...)
			}
		}
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return nil
		}
		if v.Cap() > v.Len() {
			out = append(out, path)
		}
		for i := range v.Len() {
			out = append(out, slackOf(v.Index(i), fmt.Sprintf("%s[%d]", path, i))...)
		}
	}
	return out
}
