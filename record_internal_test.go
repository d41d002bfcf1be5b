package generic

import (
	"hash/maphash"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestObjectSet runs the same steps on a set with its real hash and on
// one whose keys all collide, so that every step goes through the
// overflow: both must answer as a map[objectKey]T would.
func TestObjectSet(t *testing.T) {
	obj := func(namespace, name, rv string) *metav1.PartialObjectMetadata {
		return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, ResourceVersion: rv}}
	}
	a, b, c := objectKey{"ns", "a"}, objectKey{"ns", "b"}, objectKey{"", "c"}
	type step struct {
		set    *metav1.PartialObjectMetadata
		remove *objectKey
	}
	steps := []step{
		{set: obj("ns", "a", "1")}, {set: obj("ns", "b", "2")}, {set: obj("", "c", "3")},
		{set: obj("ns", "b", "4")}, {remove: &a}, {set: obj("ns", "b", "5")}, {remove: &b},
		{set: obj("ns", "a", "6")}, {set: obj("ns", "b", "7")}, {remove: &a},
	}
	tests := []struct {
		name string
		set  *objectSet[*metav1.PartialObjectMetadata]
	}{
		{name: "maphash", set: newObjectSet[*metav1.PartialObjectMetadata](maphash.MakeSeed(), 0)},
		{name: "every key collides", set: &objectSet[*metav1.PartialObjectMetadata]{
			hash: func(objectKey) uint64 { return 42 }, objects: map[uint64]*metav1.PartialObjectMetadata{}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			want := map[objectKey]string{}
			for i, st := range steps {
				if st.set != nil {
					key := objectKey{st.set.Namespace, st.set.Name}
					tc.set.set(key, st.set)
					want[key] = st.set.ResourceVersion
				} else {
					tc.set.remove(*st.remove)
					delete(want, *st.remove)
				}
				got := map[objectKey]string{}
				for _, key := range []objectKey{a, b, c} {
					if o, ok := tc.set.get(key); ok {
						got[key] = o.ResourceVersion
					}
				}
				if diff := cmp.Diff(want, got, cmp.AllowUnexported(objectKey{})); diff != "" {
					t.Fatalf("after step %d (-want +got):\n%s", i, diff)
				}
			}
		})
	}
}
