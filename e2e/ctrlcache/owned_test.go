package ctrlcache

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/ctrlcache"
)

// ownedTimings are the memberships' timings here: a replica reshards
// within a few 200 ms rounds; RenewDeadline leaves a loaded machine room
// to renew.
var ownedTimings = generic.Membership{RetryPeriod: 200 * time.Millisecond, RenewDeadline: 2 * time.Second, LeaseDuration: 4 * time.Second}

// TestOwnedAtJoin runs a controller-runtime controller of ConfigMaps on
// replica a alone, then starts replica b: b's cache holds its new shard
// before b owns it (a still owns it, and reconciles it, until it has
// narrowed), so a controller that reconciled what its cache tells it of
// would reconcile b's shard on both replicas at once. With Owned, no
// reconcile starts on a replica while the other owns its ConfigMap, and
// each ConfigMap of b's shard is reconciled by b once b owns it.
func TestOwnedAtJoin(t *testing.T) {
	tests := []struct {
		name string
		// cacheOptions are the caches' options in namespace ns, labelled.
		cacheOptions func(ns string, labelled labels.Selector) crcache.Options
		primary      func() client.Object
	}{
		{
			name: "typed, DefaultNamespaces",
			cacheOptions: func(ns string, _ labels.Selector) crcache.Options {
				return crcache.Options{DefaultNamespaces: map[string]crcache.Config{ns: {}}}
			},
			primary: func() client.Object { return &corev1.ConfigMap{} },
		},
		{
			name: "metadata-only, every namespace, a label selector",
			cacheOptions: func(_ string, labelled labels.Selector) crcache.Options {
				return crcache.Options{DefaultLabelSelector: labelled}
			},
			primary: func() client.Object { return metadataOf(corev1.SchemeGroupVersion.WithKind("ConfigMap")) },
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ns, cl := testNamespace(t, 0)
			labelled := labels.SelectorFromSet(labels.Set{"owned-test": ns})
			names := createLabelled(t, cl, ns, "p", 20)
			rec := newOwnedReconciles()
			replicaOf := func(id string) *ownedReplica {
				return startOwnedReplica(t, ns, id, tc.cacheOptions(ns, labelled), tc.primary, rec)
			}
			a := replicaOf("a")
			waitFor(t, "replica a to reconcile every ConfigMap", func() bool { return rec.reconciledAll("a", names) })
			b := replicaOf("b")
			waitSettled(t, a, b)
			ofB := a.notOwned(t, cl, ns, names)
			waitFor(t, "replica b to reconcile the ConfigMaps it owns", func() bool { return rec.reconciledAll("b", ofB) })

			rec.mu.Lock()
			defer rec.mu.Unlock()
			if len(rec.overlaps) > 0 {
				t.Errorf("%d reconciles started while another replica owned the ConfigMap: %v", len(rec.overlaps), rec.overlaps[:min(5, len(rec.overlaps))])
			}
			if len(ofB) == 0 || len(ofB) == len(names) {
				t.Errorf("replica b owns %d of %d ConfigMaps, want some, not all (UIDs are random: a split this even fails once in 2^19 runs)", len(ofB), len(names))
			}
			if diff := cmp.Diff(slices.Sorted(slices.Values(ofB)), slices.Sorted(maps.Keys(rec.byReplica["b"]))); diff != "" {
				t.Errorf("the ConfigMaps replica b reconciled are not those it owns (-want +got):\n%s", diff)
			}
		})
	}
}

// createLabelled creates ConfigMaps prefix-0 … prefix-(n-1) in ns,
// labelled owned-test=ns, and returns their names.
func createLabelled(t *testing.T, cl client.Client, ns, prefix string, n int) []string {
	t.Helper()
	var names []string
	for i := range n {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d", prefix, i), Namespace: ns, Labels: map[string]string{"owned-test": ns}}}
		if err := cl.Create(context.Background(), cm); err != nil {
			t.Fatal(err)
		}
		names = append(names, cm.Name)
	}
	return names
}

// ownedReplica is one replica of a membership: a cache of
// BuilderWithOptions with the membership, and a controller-runtime
// controller of ConfigMaps on it, kept to what the replica owns by Owned.
type ownedReplica struct {
	id    string
	cache crcache.Cache
	// ownership is what the replica owns of ConfigMaps now, as its
	// controller's Owned reads it.
	ownership func() generic.Ownership
}

func startOwnedReplica(t *testing.T, ns, id string, opts crcache.Options, primary func() client.Object, rec *ownedReconciles) *ownedReplica {
	t.Helper()
	m := ownedTimings
	m.Leases = kubernetes.NewForConfigOrDie(server.Config).CoordinationV1().Leases(ns)
	m.Group, m.Identity = "owned", id
	member, err := generic.NewMember(m)
	if err != nil {
		t.Fatal(err)
	}
	c, err := ctrlcache.BuilderWithOptions(ctrlcache.Options{Factory: []generic.FactoryOption{generic.WithMembership(member)}})(server.Config, opts)
	if err != nil {
		t.Fatal(err)
	}
	owned, err := ctrlcache.NewOwned(c, primary())
	if err != nil {
		t.Fatal(err)
	}
	informer, err := c.GetInformer(context.Background(), primary(), crcache.BlockUntilSynced(false))
	if err != nil {
		t.Fatal(err)
	}
	r := &ownedReplica{id: id, cache: c, ownership: informer.(interface{ Ownership() generic.Ownership }).Ownership}
	rec.addReplica(r)
	ctrl, err := controller.NewUnmanaged("owned-"+id, controller.Options{
		Reconciler:         owned.Reconciler(rec.reconciler(r, primary)),
		SkipNameValidation: new(true), // one controller per replica, several replicas in the test's process
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, src := range []source.Source{source.Kind(c, primary(), &handler.EnqueueRequestForObject{}, owned.Predicate()), owned.Source()} {
		if err := ctrl.Watch(src); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	var running sync.WaitGroup
	running.Go(func() {
		if err := c.Start(ctx); err != nil {
			t.Errorf("replica %s: cache Start: %v", id, err)
		}
	})
	running.Go(func() {
		if err := ctrl.Start(ctx); err != nil {
			t.Errorf("replica %s: controller Start: %v", id, err)
		}
	})
	t.Cleanup(func() {
		cancel()
		running.Wait()
	})
	return r
}

// membership is where the replica stands in its membership.
func (r *ownedReplica) membership() generic.MembershipStatus {
	registry, _ := ctrlcache.RegistryOf(r.cache)
	status, _ := registry.Membership()
	return status
}

// notOwned returns those of names (ConfigMaps of ns, read through cl) r
// does not own.
func (r *ownedReplica) notOwned(t *testing.T, cl client.Client, ns string, names []string) []string {
	t.Helper()
	ownership := r.ownership()
	var others []string
	for _, name := range names {
		obj := &corev1.ConfigMap{}
		if err := cl.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, obj); err != nil {
			t.Fatal(err)
		}
		if !ownership.Owns(obj) {
			others = append(others, name)
		}
	}
	return others
}

// waitSettled waits until each of replicas is a member of the membership
// of them all, has narrowed to its shard and owns it.
func waitSettled(t *testing.T, replicas ...*ownedReplica) {
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
		return true
	})
}

// waitFor waits for done, failing the test after two minutes.
func waitFor(t *testing.T, what string, done func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, 2*time.Minute, true, func(context.Context) (bool, error) {
		return done(), nil
	})
	if err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

// ownedReconciles records the reconciles of the replicas' controllers: how
// many times each replica reconciled each ConfigMap it found cached, and
// each reconcile that started while another replica owned its ConfigMap.
type ownedReconciles struct {
	mu        sync.Mutex
	replicas  []*ownedReplica
	byReplica map[string]map[string]int
	overlaps  []string
}

func newOwnedReconciles() *ownedReconciles {
	return &ownedReconciles{byReplica: map[string]map[string]int{}}
}

func (o *ownedReconciles) addReplica(r *ownedReplica) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.replicas = append(o.replicas, r)
	o.byReplica[r.id] = map[string]int{}
}

// reconciler is replica r's reconciler: it reads the ConfigMap from r's
// cache and records the reconcile.
func (o *ownedReconciles) reconciler(r *ownedReplica, primary func() client.Object) reconcile.Reconciler {
	return reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		obj := primary()
		err := r.cache.Get(ctx, req.NamespacedName, obj)
		if apierrors.IsNotFound(err) {
			return reconcile.Result{}, nil
		}
		if err != nil {
			return reconcile.Result{}, err
		}
		o.record(r, obj)
		return reconcile.Result{}, nil
	})
}

func (o *ownedReconciles) record(r *ownedReplica, obj client.Object) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, other := range o.replicas {
		if other != r && other.ownership().Owns(obj) {
			o.overlaps = append(o.overlaps, fmt.Sprintf("%s reconciled %s while %s owned it", r.id, obj.GetName(), other.id))
		}
	}
	o.byReplica[r.id][obj.GetName()]++
}

// reconciledAll reports whether replica id reconciled each of names.
func (o *ownedReconciles) reconciledAll(id string, names []string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, name := range names {
		if o.byReplica[id][name] == 0 {
			return false
		}
	}
	return true
}

// TestNewOwned: Owned is refused what it cannot follow, and without a
// membership, where the replica owns every object, it changes nothing.
func TestNewOwned(t *testing.T) {
	crCache, err := crcache.New(server.Config, crcache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		cache   crcache.Cache
		primary client.Object
		wantErr string
	}{
		{"controller-runtime's cache", crCache, &corev1.ConfigMap{}, "not one made by ctrlcache.New or BuilderWithOptions"},
		{"nil primary", newCache(t, crcache.Options{}), nil, "nil primary object"},
		{"nil typed primary", newCache(t, crcache.Options{}), (*corev1.ConfigMap)(nil), "nil primary object"},
		{"a kind the scheme lacks", newCache(t, crcache.Options{}), &unregistered{}, "ctrlcache: NewOwned: "},
		{"no membership", newCache(t, crcache.Options{}), &corev1.ConfigMap{}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			owned, err := ctrlcache.NewOwned(tc.cache, tc.primary)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("NewOwned = %v, want an error saying %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			r := &countingReconciler{}
			if got := owned.Reconciler(r); got != reconcile.Reconciler(r) {
				t.Errorf("Reconciler without a membership = %v, want the reconciler given", got)
			}
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "any", Name: "any", UID: "0"}}
			got := []bool{
				owned.Predicate().Create(event.CreateEvent{Object: cm}),
				owned.Predicate().Update(event.UpdateEvent{ObjectOld: cm, ObjectNew: cm}),
				owned.Predicate().Delete(event.DeleteEvent{Object: cm}),
				owned.Predicate().Generic(event.GenericEvent{Object: cm}),
			}
			if diff := cmp.Diff([]bool{true, true, true, true}, got); diff != "" {
				t.Errorf("Predicate without a membership: Create, Update, Delete, Generic (-want +got):\n%s", diff)
			}
		})
	}
}

// unregistered is a kind no scheme knows.
type unregistered struct{ corev1.ConfigMap }

type countingReconciler struct{ n int }

func (c *countingReconciler) Reconcile(context.Context, reconcile.Request) (reconcile.Result, error) {
	c.n++
	return reconcile.Result{}, nil
}
