package listwatch

import (
	"context"
	"hash/maphash"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
)

// TestObjectSet runs the same steps on a set with its real hash and on
// one whose keys all collide, so that every step goes through the
// overflow, each measured and not: all must answer as a
// map[cache.ObjectName]T would, and a measured set's encodedBytes must be
// the sum of its objects' sizes (0 unmeasured).
func TestObjectSet(t *testing.T) {
	obj := func(namespace, name, rv string) *metav1.PartialObjectMetadata {
		return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, ResourceVersion: rv}}
	}
	// size makes each state's size its own: 100 times its resourceVersion.
	size := func(o *metav1.PartialObjectMetadata) int {
		rv, _ := strconv.Atoi(o.ResourceVersion)
		return 100 * rv
	}
	a, b, c := cache.ObjectName{Namespace: "ns", Name: "a"}, cache.ObjectName{Namespace: "ns", Name: "b"}, cache.ObjectName{Name: "c"}
	type step struct {
		set    *metav1.PartialObjectMetadata
		remove *cache.ObjectName
	}
	steps := []step{
		{set: obj("ns", "a", "1")}, {set: obj("ns", "b", "2")}, {set: obj("", "c", "3")},
		{set: obj("ns", "b", "4")}, {remove: &a}, {set: obj("ns", "b", "5")}, {remove: &b},
		{set: obj("ns", "a", "6")}, {set: obj("ns", "b", "7")}, {remove: &a}, {remove: &a},
	}
	collide := func(measure func(*metav1.PartialObjectMetadata) int) *objectSet[*metav1.PartialObjectMetadata] {
		return &objectSet[*metav1.PartialObjectMetadata]{
			hash: func(cache.ObjectName) uint64 { return 42 }, objects: map[uint64]*metav1.PartialObjectMetadata{},
			sizes: newEncodedSizes(measure, 0)}
	}
	tests := []struct {
		name     string
		set      *objectSet[*metav1.PartialObjectMetadata]
		measured bool
	}{
		{name: "maphash", set: newObjectSet[*metav1.PartialObjectMetadata](maphash.MakeSeed(), 0, nil)},
		{name: "every key collides", set: collide(nil)},
		{name: "maphash, measured", set: newObjectSet(maphash.MakeSeed(), 0, size), measured: true},
		{name: "every key collides, measured", set: collide(size), measured: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			type state struct {
				RVs   map[cache.ObjectName]string
				Bytes int64
			}
			want := state{RVs: map[cache.ObjectName]string{}}
			held := map[cache.ObjectName]*metav1.PartialObjectMetadata{}
			for i, st := range steps {
				if st.set != nil {
					key := cache.ObjectName{Namespace: st.set.Namespace, Name: st.set.Name}
					tc.set.set(key, st.set)
					want.RVs[key] = st.set.ResourceVersion
					held[key] = st.set
				} else {
					tc.set.remove(*st.remove)
					delete(want.RVs, *st.remove)
					delete(held, *st.remove)
				}
				want.Bytes = 0
				for _, o := range held {
					if tc.measured {
						want.Bytes += int64(size(o))
					}
				}
				got := state{RVs: map[cache.ObjectName]string{}, Bytes: tc.set.encodedBytes()}
				for _, key := range []cache.ObjectName{a, b, c} {
					if o, ok := tc.set.get(key); ok {
						got.RVs[key] = o.ResourceVersion
					}
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Fatalf("after step %d (-want +got):\n%s", i, diff)
				}
			}
		})
	}
}

// TestStopTakesBackUntakenEvents: events the converting watch buffered but
// the reflector never took leave the ingest's record as it was, so that a
// watch resumed from the reflector's last resourceVersion finds the record
// in step with the cache.
func TestStopTakesBackUntakenEvents(t *testing.T) {
	source := watch.NewFake()
	lw := &cache.ListWatch{
		WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watch.Interface, error) { return source, nil },
	}
	pom := func(name string) *metav1.PartialObjectMetadata {
		return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, ResourceVersion: "1"}}
	}
	chain := testChain[*metav1.PartialObjectMetadata](lw)
	in := chain.ingest
	w, err := in.watch(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"taken", "left-1", "left-2"} {
		source.Add(pom(name))
	}
	if e := <-w.ResultChan(); e.Object.(*metav1.PartialObjectMetadata).Name != "taken" {
		t.Fatalf("first event %v", e)
	}
	if err := wait.PollUntilContextTimeout(t.Context(), time.Millisecond, 10*time.Second, true,
		func(context.Context) (bool, error) { return len(w.(*convertingWatch).result) == 2, nil }); err != nil {
		t.Fatal("the two other events were not buffered")
	}
	w.Stop()
	chain.Wait()

	got := map[string]bool{}
	for _, name := range []string{"taken", "left-1", "left-2"} {
		_, got[name] = in.record.get(in.record.current(), cache.ObjectName{Namespace: "ns", Name: name})
	}
	if diff := cmp.Diff(map[string]bool{"taken": true, "left-1": false, "left-2": false}, got); diff != "" {
		t.Errorf("recorded after Stop (-want +got):\n%s", diff)
	}
}
