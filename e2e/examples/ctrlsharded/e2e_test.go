package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	crlog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/e2e/apiserver"
)

// timings are the membership's in the test: LeaseDuration short, so that a
// takeover takes seconds; RenewDeadline long enough that a replica on a
// loaded machine does not step down while the membership is meant to stay
// settled.
var timings = generic.Membership{RetryPeriod: 200 * time.Millisecond, RenewDeadline: 3 * time.Second, LeaseDuration: 5 * time.Second}

// TestTwoReplicas runs the example's manager as two replicas, a and b, on
// the embedded API server, and kills b.
//
// "Exactly once" is, for each primary ConfigMap created while the
// membership is settled and later deleted: one reconcile that finds it
// cached, on the replica that owns it (its generic.Ownership), and none on
// the other; after its delete, one reconcile that finds it gone, on the
// same replica, and none on the other. The test waits for each expected
// reconcile, then checks the counts, and checks them again at its end,
// seconds later, so that a late duplicate is caught. No reconcile of a
// primary starts while another live replica owns it.
//
// b is killed as a crash would: its every request fails from then on (so
// it cannot say in its Lease that it leaves), then its manager's context
// is cancelled. a takes b's primaries once b's Lease has expired
// (docs/sharding.md, "Timing bounds"): not earlier than LeaseDuration -
// RenewDeadline - RetryPeriod/2 after b was last seen owning its shard
// (before that, b could still have been renewing), and within
// LeaseDuration and a reshard; the test measures the takeover and asserts
// only these bounds, the upper one loose, for a loaded machine.
func TestTwoReplicas(t *testing.T) {
	crlog.SetLogger(logr.Discard())
	server := apiserver.StartForTest(t)
	kube := kubernetes.NewForConfigOrDie(server.Config)
	ns := createNamespace(t, kube)
	rec := newRecorder()
	a := startReplica(t, server.Config, ns, "a", rec)
	b := startReplica(t, server.Config, ns, "b", rec)
	waitSettled(t, a, b)

	// Creates and deletes, each reconciled exactly once, by its owner.
	settled := createPrimaries(t, kube, ns, "p", 40)
	rec.waitFound(t, settled)
	deletePrimaries(t, kube, ns, settled)
	rec.waitGone(t, settled)
	onceSettled := exactlyOnce(t, settled, a, b)
	rec.check(t, "creates and deletes, a and b settled", onceSettled)
	if perReplica := onceSettled.perReplica(); perReplica["a"] == 0 || perReplica["b"] == 0 {
		t.Errorf("primaries per replica: %v; want both to own some (UIDs are random: this fails once in 2^39 runs)", perReplica)
	}

	// b dies; a takes its primaries.
	live := createPrimaries(t, kube, ns, "q", 40)
	rec.waitFound(t, live)
	ofB := ownedBy(b, live)
	if s := b.membership(); !s.Owns || s.SteppedDown {
		t.Fatalf("replica b before the kill: %+v, want it owning its shard", s)
	}
	lastSeenOwning := time.Now()
	b.kill()
	waitSettled(t, a)
	takeover := time.Since(lastSeenOwning)
	if notA := len(live) - len(ownedBy(a, live)); notA > 0 {
		t.Errorf("a owns all but %d of the live primaries after the takeover, want all", notA)
	}
	rec.waitFoundBy(t, "a", keysOf(ofB))
	reconciled := time.Since(lastSeenOwning)
	t.Logf("takeover: a owned b's shard %v after b was last seen owning it, and had reconciled b's %d live primaries %v after (LeaseDuration %v, RenewDeadline %v, RetryPeriod %v)",
		takeover, len(ofB), reconciled, timings.LeaseDuration, timings.RenewDeadline, timings.RetryPeriod)
	if earliest := rec.firstFoundBy("a", keysOf(ofB)).Sub(lastSeenOwning); earliest < timings.LeaseDuration-timings.RenewDeadline-timings.RetryPeriod/2 {
		t.Errorf("a reconciled one of b's primaries %v after b was last seen owning it, before b's Lease could have expired (%v)", earliest, timings.LeaseDuration-timings.RenewDeadline-timings.RetryPeriod/2)
	}
	if bound := timings.LeaseDuration + time.Minute; takeover > bound {
		t.Errorf("takeover took %v, want within LeaseDuration and a reshard (bounded here by %v)", takeover, bound)
	}
	b.waitStopped(t)

	// Creates and deletes after the takeover: all a's, each exactly once.
	deletePrimaries(t, kube, ns, live)
	rec.waitGone(t, live)
	after := createPrimaries(t, kube, ns, "r", 20)
	rec.waitFound(t, after)
	deletePrimaries(t, kube, ns, after)
	rec.waitGone(t, after)
	onceAfter := exactlyOnce(t, after, a)
	rec.check(t, "creates and deletes after the takeover", onceAfter)
	rec.checkTakeover(t, live, ofB)

	// Seconds later: no late duplicate.
	rec.check(t, "creates and deletes, a and b settled, at the end", onceSettled)
	rec.check(t, "creates and deletes after the takeover, at the end", onceAfter)
	rec.checkNoOverlap(t)
}

func createNamespace(t *testing.T, kube kubernetes.Interface) string {
	t.Helper()
	ns, err := kube.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "ctrlsharded-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

// createPrimaries creates primary ConfigMaps prefix-0 … prefix-(n-1) in
// ns and returns them as the server made them.
func createPrimaries(t *testing.T, kube kubernetes.Interface, ns, prefix string, n int) []*corev1.ConfigMap {
	t.Helper()
	var created []*corev1.ConfigMap
	for i := range n {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d", prefix, i), Labels: map[string]string{PrimaryLabel: "true"}}}
		cm, err := kube.CoreV1().ConfigMaps(ns).Create(context.Background(), cm, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		created = append(created, cm)
	}
	return created
}

func deletePrimaries(t *testing.T, kube kubernetes.Interface, ns string, cms []*corev1.ConfigMap) {
	t.Helper()
	for _, cm := range cms {
		if err := kube.CoreV1().ConfigMaps(ns).Delete(context.Background(), cm.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

func keysOf(cms []*corev1.ConfigMap) []string {
	keys := make([]string, len(cms))
	for i, cm := range cms {
		keys[i] = cm.Namespace + "/" + cm.Name
	}
	return keys
}

// ownedBy returns those of cms r owns now.
func ownedBy(r *replica, cms []*corev1.ConfigMap) []*corev1.ConfigMap {
	ownership := r.ownership()
	var owned []*corev1.ConfigMap
	for _, cm := range cms {
		if ownership.Owns(cm) {
			owned = append(owned, cm)
		}
	}
	return owned
}

// waitSettled waits until replicas have settled into a membership of
// them all: each is a member of it, has narrowed to its shard, and owns
// it, and what they own partitions the hash space, each owning some (of
// 64 sample UIDs). A replica's status alone does not say it: right after
// its view changes, it says Owns for the shard it owned before.
func waitSettled(t *testing.T, replicas ...*replica) {
	t.Helper()
	var ids []string
	for _, r := range replicas {
		ids = append(ids, r.id)
	}
	slices.Sort(ids)
	waitFor(t, fmt.Sprintf("replicas %v to settle", ids), func() bool {
		for _, r := range replicas {
			s := r.membership()
			if !slices.Equal(s.Members, ids) || !s.Owns || s.Phase != "Narrowed" {
				return false
			}
		}
		return partitioned(replicas)
	})
}

// samples are objects whose UIDs spread over the hash space: random, as
// the server's (names alike, "sample-0" to "sample-63", would all hash
// into one half).
var samples = func() []*corev1.ConfigMap {
	var cms []*corev1.ConfigMap
	for range 64 {
		cms = append(cms, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{UID: uuid.NewUUID()}})
	}
	return cms
}()

// partitioned reports whether each sample is owned by exactly one of
// replicas, and each owns some.
func partitioned(replicas []*replica) bool {
	owns := map[string]int{}
	for _, cm := range samples {
		owners := 0
		for _, r := range replicas {
			if r.ownership().Owns(cm) {
				owners++
				owns[r.id]++
			}
		}
		if owners != 1 {
			return false
		}
	}
	return len(owns) == len(replicas)
}

// waitFor waits for done, failing the test after two minutes.
func waitFor(t *testing.T, what string, done func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 10*time.Millisecond, 2*time.Minute, true, func(context.Context) (bool, error) {
		return done(), nil
	})
	if err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

// errCut is the error of a killed replica's requests.
var errCut = errors.New("test: the replica is cut off from the API server")

// cuttable fails every request once cut.
type cuttable struct {
	next http.RoundTripper
	cut  *atomic.Bool
}

func (c cuttable) RoundTrip(r *http.Request) (*http.Response, error) {
	if c.cut.Load() {
		return nil, errCut
	}
	return c.next.RoundTrip(r)
}

// cutConfig returns a copy of cfg whose requests fail once cut is set.
func cutConfig(cfg *rest.Config, cut *atomic.Bool) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return cuttable{next: rt, cut: cut} })
	return cfg
}
