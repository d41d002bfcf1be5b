package ctrlcache

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/sharding"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/ctrlcache"
)

// TestChildrenShardedByNamespace runs two replicas of a controller-runtime
// controller that makes a child Secret for each primary ConfigMap (a
// controller reference, watched with Owns), every informer sharded by
// namespace, as docs/controller-runtime.md says to: a primary and its
// children are in one replica's caches and owned by it, so that replica
// sees its children (it creates each once) and hears of their changes (it
// makes a deleted child again), and the other does neither.
func TestChildrenShardedByNamespace(t *testing.T) {
	kube := kubernetes.NewForConfigOrDie(server.Config)
	namespaces := namespacesInBothShards(t, kube)
	rec := &childCreates{byPrimary: map[string]map[string]int{}}
	replicas := map[string]*childReplica{}
	for _, id := range []string{"a", "b"} {
		replicas[id] = startChildReplica(t, namespaces, id, rec)
	}
	waitFor(t, "the replicas to settle", func() bool {
		for _, r := range replicas {
			s := r.membership()
			if len(s.Members) != 2 || !s.Owns || s.Phase != "Narrowed" {
				return false
			}
		}
		return true
	})
	var primaries []*corev1.ConfigMap
	for _, ns := range namespaces {
		for i := range 2 {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("primary-%d", i)}}
			created, err := kube.CoreV1().ConfigMaps(ns).Create(context.Background(), cm, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			primaries = append(primaries, created)
		}
	}
	want := map[string]map[string]int{}
	for _, cm := range primaries {
		var owners []string
		for id, r := range replicas {
			if r.ownership().Owns(cm) {
				owners = append(owners, id)
			}
		}
		if len(owners) != 1 {
			t.Fatalf("%s/%s is owned by %v, want one replica", cm.Namespace, cm.Name, owners)
		}
		want[cm.Namespace+"/"+cm.Name] = map[string]int{owners[0]: 1}
	}
	waitChildren(t, kube, primaries)
	rec.check(t, "each primary's child made", want)

	// The children deleted: their owners hear of it and make them again.
	for _, cm := range primaries {
		if err := kube.CoreV1().Secrets(cm.Namespace).Delete(context.Background(), cm.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for key, counts := range want {
		for id := range counts {
			want[key][id] = 2
		}
	}
	waitFor(t, "each child to be made again", func() bool {
		rec.mu.Lock()
		defer rec.mu.Unlock()
		for key, counts := range want {
			for id, n := range counts {
				if rec.byPrimary[key][id] < n {
					return false
				}
			}
		}
		return true
	})
	waitChildren(t, kube, primaries)
	rec.check(t, "each primary's child made, then made again", want)
}

// namespacesInBothShards creates four namespaces, two in each shard of 2
// by namespace: their names differ at their start, where FNV-1a (the shard
// key's hash) spreads them (names alike but for a suffix fall together).
func namespacesInBothShards(t *testing.T, kube kubernetes.Interface) []string {
	t.Helper()
	perShard := map[bool][]string{}
	for len(perShard[false]) < 2 || len(perShard[true]) < 2 {
		name := string(uuid.NewUUID())[:8] + "-children"
		second := !sharding.HexLess("0x"+sharding.HashField(name), "0x8000000000000000")
		if len(perShard[second]) < 2 {
			perShard[second] = append(perShard[second], name)
		}
	}
	namespaces := slices.Concat(perShard[false], perShard[true])
	for _, ns := range namespaces {
		if _, err := kube.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	return namespaces
}

// waitChildren waits until each of primaries has its child Secret.
func waitChildren(t *testing.T, kube kubernetes.Interface, primaries []*corev1.ConfigMap) {
	t.Helper()
	waitFor(t, "each primary's child", func() bool {
		for _, cm := range primaries {
			if _, err := kube.CoreV1().Secrets(cm.Namespace).Get(context.Background(), cm.Name, metav1.GetOptions{}); err != nil {
				return false
			}
		}
		return true
	})
}

// childReplica is a replica of the children's controller: its manager's
// cache holds the namespaces of its shard, by namespace.
type childReplica struct {
	mgr       manager.Manager
	ownership func() generic.Ownership
}

func startChildReplica(t *testing.T, namespaces []string, id string, rec *childCreates) *childReplica {
	t.Helper()
	m := ownedTimings
	m.Leases = kubernetes.NewForConfigOrDie(server.Config).CoordinationV1().Leases(namespaces[0])
	m.Group, m.Identity = "children", id
	member, err := generic.NewMember(m)
	if err != nil {
		t.Fatal(err)
	}
	defaultNamespaces := map[string]crcache.Config{}
	for _, ns := range namespaces {
		defaultNamespaces[ns] = crcache.Config{}
	}
	mgr, err := manager.New(server.Config, manager.Options{
		NewCache: ctrlcache.BuilderWithOptions(ctrlcache.Options{
			Factory:  []generic.FactoryOption{generic.WithMembership(member)},
			Informer: []generic.InformerOption{generic.WithShardKey(generic.ShardByNamespace)},
		}),
		Cache:      crcache.Options{DefaultNamespaces: defaultNamespaces},
		Metrics:    metricsserver.Options{BindAddress: "0"},
		Controller: config.Controller{SkipNameValidation: new(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	owned, err := ctrlcache.NewOwned(mgr.GetCache(), &corev1.ConfigMap{})
	if err != nil {
		t.Fatal(err)
	}
	informer, err := mgr.GetCache().GetInformer(context.Background(), &corev1.ConfigMap{}, crcache.BlockUntilSynced(false))
	if err != nil {
		t.Fatal(err)
	}
	r := &childReplica{mgr: mgr, ownership: informer.(interface{ Ownership() generic.Ownership }).Ownership}
	err = builder.ControllerManagedBy(mgr).
		Named("children").
		For(&corev1.ConfigMap{}, builder.WithPredicates(owned.Predicate())).
		Owns(&corev1.Secret{}).
		WatchesRawSource(owned.Source()).
		Complete(owned.Reconciler(rec.reconciler(id, mgr.GetClient())))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		if err := mgr.Start(ctx); err != nil {
			t.Errorf("replica %s: manager Start: %v", id, err)
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-stopped
	})
	return r
}

func (r *childReplica) membership() generic.MembershipStatus {
	registry, _ := ctrlcache.RegistryOf(r.mgr.GetCache())
	status, _ := registry.Membership()
	return status
}

// childCreates counts, per primary and replica, the children the
// replicas made.
type childCreates struct {
	mu        sync.Mutex
	byPrimary map[string]map[string]int
}

// reconciler makes the primary's child, a Secret of its name, if the
// replica's cache does not hold it.
func (c *childCreates) reconciler(replica string, cl client.Client) reconcile.Reconciler {
	return reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		primary := &corev1.ConfigMap{}
		if err := cl.Get(ctx, req.NamespacedName, primary); err != nil {
			return reconcile.Result{}, client.IgnoreNotFound(err)
		}
		err := cl.Get(ctx, req.NamespacedName, &corev1.Secret{})
		if !apierrors.IsNotFound(err) {
			return reconcile.Result{}, err
		}
		child := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: req.Namespace, Name: req.Name}}
		if err := controllerutil.SetControllerReference(primary, child, cl.Scheme()); err != nil {
			return reconcile.Result{}, err
		}
		if err := cl.Create(ctx, child); err != nil {
			return reconcile.Result{}, fmt.Errorf("replica %s: %w", replica, err)
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		key := req.String()
		if c.byPrimary[key] == nil {
			c.byPrimary[key] = map[string]int{}
		}
		c.byPrimary[key][replica]++
		return reconcile.Result{}, nil
	})
}

func (c *childCreates) check(t *testing.T, what string, want map[string]map[string]int) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	if diff := cmp.Diff(want, c.byPrimary); diff != "" {
		t.Errorf("%s: children made per primary and replica (-want +got):\n%s", what, diff)
	}
}

// TestChildrenCachedWholeRefused: an informer of its own shard (all the
// children, say) is refused under a membership, with an error naming the
// options, where the cache makes the informer.
func TestChildrenCachedWholeRefused(t *testing.T) {
	member, err := generic.NewMember(generic.Membership{
		Leases: kubernetes.NewForConfigOrDie(server.Config).CoordinationV1().Leases("default"),
		Group:  "refused", Identity: "a",
	})
	if err != nil {
		t.Fatal(err)
	}
	c, err := ctrlcache.BuilderWithOptions(ctrlcache.Options{
		Factory:  []generic.FactoryOption{generic.WithMembership(member)},
		ByObject: map[client.Object][]generic.InformerOption{&corev1.Secret{}: {generic.WithShard(0, 1)}},
	})(server.Config, crcache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.GetInformer(context.Background(), &corev1.Secret{}, crcache.BlockUntilSynced(false))
	if want := "WithMembership and WithShard"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("GetInformer of Secrets with WithShard(0, 1) under a membership = %v, want an error saying %q", err, want)
	}
}
