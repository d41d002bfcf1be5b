package main

import (
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

// recorder records the replicas' reconciles: per primary ("ns/name") and
// replica, how many found it cached and how many found it gone, and when
// each replica first found it; and each reconcile that started while
// another replica owned its primary.
type recorder struct {
	mu         sync.Mutex
	replicas   map[string]*replica
	found      tally
	gone       tally
	firstFound map[string]map[string]time.Time
	overlaps   []string
}

// tally counts reconciles per primary and replica.
type tally map[string]map[string]int

func (t tally) add(key, replica string) {
	if t[key] == nil {
		t[key] = map[string]int{}
	}
	t[key][replica]++
}

// of returns the counts of keys, a copy.
func (t tally) of(keys []string) tally {
	out := tally{}
	for _, key := range keys {
		if counts, ok := t[key]; ok {
			out[key] = maps.Clone(counts)
		}
	}
	return out
}

func newRecorder() *recorder {
	return &recorder{replicas: map[string]*replica{}, found: tally{}, gone: tally{}, firstFound: map[string]map[string]time.Time{}}
}

func (rec *recorder) addReplica(r *replica) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	rec.replicas[r.id] = r
}

// record is the replicas' OnReconcile.
func (rec *recorder) record(r Reconcile) {
	now := time.Now()
	rec.mu.Lock()
	defer rec.mu.Unlock()
	key := r.Key.String()
	if r.Primary == nil {
		rec.gone.add(key, r.Replica)
		return
	}
	rec.found.add(key, r.Replica)
	if rec.firstFound[key] == nil {
		rec.firstFound[key] = map[string]time.Time{}
	}
	if _, ok := rec.firstFound[key][r.Replica]; !ok {
		rec.firstFound[key][r.Replica] = now
	}
	for id, other := range rec.replicas {
		if id != r.Replica && other.ownership().Owns(r.Primary) {
			rec.overlaps = append(rec.overlaps, fmt.Sprintf("%s reconciled %s while %s owned it", r.Replica, key, id))
		}
	}
}

// waitFound waits until a replica has found each of cms cached.
func (rec *recorder) waitFound(t *testing.T, cms []*corev1.ConfigMap) {
	t.Helper()
	waitFor(t, "a reconcile of each primary created", func() bool { return rec.all(rec.found, keysOf(cms), "") })
}

// waitGone waits until a replica has found each of cms gone.
func (rec *recorder) waitGone(t *testing.T, cms []*corev1.ConfigMap) {
	t.Helper()
	waitFor(t, "a reconcile of each primary deleted", func() bool { return rec.all(rec.gone, keysOf(cms), "") })
}

// waitFoundBy waits until replica id has found each of keys cached.
func (rec *recorder) waitFoundBy(t *testing.T, id string, keys []string) {
	t.Helper()
	waitFor(t, "replica "+id+" to reconcile each primary", func() bool { return rec.all(rec.found, keys, id) })
}

// all reports whether tally counts each of keys, by replica id (any if
// empty).
func (rec *recorder) all(counts tally, keys []string, id string) bool {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for _, key := range keys {
		if id == "" && len(counts[key]) == 0 || id != "" && counts[key][id] == 0 {
			return false
		}
	}
	return true
}

// firstFoundBy returns when replica id first found any of keys cached.
func (rec *recorder) firstFoundBy(id string, keys []string) time.Time {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	var first time.Time
	for _, key := range keys {
		if at, ok := rec.firstFound[key][id]; ok && (first.IsZero() || at.Before(first)) {
			first = at
		}
	}
	return first
}

// once is what "exactly once" expects of some primaries: one reconcile
// that found each cached and one that found it gone, both by its owner.
type once struct{ found, gone tally }

// exactlyOnce returns what "exactly once" expects of cms: each is owned
// by exactly one of replicas now.
func exactlyOnce(t *testing.T, cms []*corev1.ConfigMap, replicas ...*replica) once {
	t.Helper()
	want := once{found: tally{}, gone: tally{}}
	for _, cm := range cms {
		var owners []string
		for _, r := range replicas {
			if r.ownership().Owns(cm) {
				owners = append(owners, r.id)
			}
		}
		if len(owners) != 1 {
			t.Errorf("%s/%s is owned by %v, want one replica", cm.Namespace, cm.Name, owners)
			continue
		}
		key := cm.Namespace + "/" + cm.Name
		want.found.add(key, owners[0])
		want.gone.add(key, owners[0])
	}
	return want
}

// perReplica returns how many primaries each replica owns.
func (o once) perReplica() map[string]int {
	n := map[string]int{}
	for _, counts := range o.found {
		for id := range counts {
			n[id]++
		}
	}
	return n
}

// check compares the reconciles recorded of want's primaries with want.
func (rec *recorder) check(t *testing.T, what string, want once) {
	t.Helper()
	keys := slices.Collect(maps.Keys(want.found))
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if diff := cmp.Diff(want.found, rec.found.of(keys)); diff != "" {
		t.Errorf("%s: reconciles that found each primary cached, per replica (-want +got):\n%s", what, diff)
	}
	if diff := cmp.Diff(want.gone, rec.gone.of(keys)); diff != "" {
		t.Errorf("%s: reconciles that found each primary gone, per replica (-want +got):\n%s", what, diff)
	}
}

// checkTakeover checks the reconciles of live, the primaries that lived
// through b's death, of which b owned ofB: each was found cached once by
// its owner before; a found each of ofB cached after (once, or more: the
// contract does not say); each was found gone once, by a.
func (rec *recorder) checkTakeover(t *testing.T, live, ofB []*corev1.ConfigMap) {
	t.Helper()
	wantFound, wantGone := tally{}, tally{}
	ofBKeys := keysOf(ofB)
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for _, key := range keysOf(live) {
		wantGone.add(key, "a")
		if !slices.Contains(ofBKeys, key) {
			wantFound.add(key, "a")
			continue
		}
		wantFound.add(key, "b")
		byA := rec.found[key]["a"]
		wantFound[key]["a"] = byA
		if byA == 0 {
			t.Errorf("%s, b's, was not reconciled by a after b died", key)
		}
	}
	keys := keysOf(live)
	if diff := cmp.Diff(wantFound, rec.found.of(keys)); diff != "" {
		t.Errorf("the primaries that lived through b's death: reconciles that found each cached, per replica (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantGone, rec.gone.of(keys)); diff != "" {
		t.Errorf("the primaries that lived through b's death: reconciles that found each gone, per replica (-want +got):\n%s", diff)
	}
	var twice []string
	for _, key := range ofBKeys {
		if rec.found[key]["a"] > 1 {
			twice = append(twice, key)
		}
	}
	t.Logf("a reconciled %d of b's %d primaries more than once after the takeover: %v", len(twice), len(ofBKeys), twice)
}

// checkNoOverlap checks that no reconcile started while another replica
// owned its primary.
func (rec *recorder) checkNoOverlap(t *testing.T) {
	t.Helper()
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.overlaps) > 0 {
		t.Errorf("%d reconciles started while another replica owned the primary: %v", len(rec.overlaps), rec.overlaps[:min(5, len(rec.overlaps))])
	}
}
