package integration

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/controller"
	"github.com/generic-informers/generic/e2e/apiserver"
	"github.com/generic-informers/generic/internal/widget"
	"github.com/generic-informers/generic/typed"
)

// memberTimings are the membership's timings in these tests: a replica
// that cannot renew its Lease owns nothing after 1 s, the others take its
// shard 3 s after they last saw its Lease change.
var memberTimings = generic.Membership{RetryPeriod: 200 * time.Millisecond, RenewDeadline: time.Second, LeaseDuration: 3 * time.Second, LeaveTimeout: 30 * time.Second}

// memberReplica is one replica of a membership on the embedded server:
// its factory, ConfigMap informer and the ConfigMaps its handlers were
// told it holds (adds, deletes); cut makes its every request fail, as a
// replica cut off from the API server.
type memberReplica struct {
	*shardReplica
	id  string
	cut atomic.Bool

	mu      sync.Mutex
	handled map[string]bool
}

// errCut is the error of a cut-off replica's requests.
var errCut = errors.New("test: the replica is cut off from the API server")

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

func newMemberReplica(t *testing.T, config *rest.Config, namespace, id string) *memberReplica {
	t.Helper()
	r := &memberReplica{id: id, handled: map[string]bool{}}
	config = rest.CopyConfig(config)
	config.Wrap(func(rt http.RoundTripper) http.RoundTripper { return cuttable{next: rt, cut: &r.cut} })
	m := memberTimings
	m.Leases = kubernetes.NewForConfigOrDie(config).CoordinationV1().Leases(namespace)
	m.Group, m.Identity = "members", id
	member, err := generic.NewMember(m)
	if err != nil {
		t.Fatal(err)
	}
	factory, err := typed.NewFactory(config, widget.NewScheme(), generic.WithNamespace(namespace), generic.WithMembership(member))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(factory.Shutdown)
	informer, err := typed.InformerFor[*corev1.ConfigMap](factory)
	if err != nil {
		t.Fatal(err)
	}
	r.shardReplica = &shardReplica{namespace: namespace, factory: factory, informer: informer}
	if _, err := informer.AddEventHandler(cache.TypedResourceEventHandlerDetailedFuncs[*corev1.ConfigMap]{
		AddFunc:    func(cm *corev1.ConfigMap, _ bool) { r.handle(cm.Name, true) },
		DeleteFunc: func(d cache.DeletedObject[*corev1.ConfigMap]) { r.handle(d.GetName(), false) },
	}); err != nil {
		t.Fatal(err)
	}
	return r
}

func (r *memberReplica) handle(name string, held bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if held {
		r.handled[name] = true
	} else {
		delete(r.handled, name)
	}
}

// handlerNames are the ConfigMaps the handlers were told the replica
// holds: its adds less its deletes.
func (r *memberReplica) handlerNames() map[string]bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return copyNames(r.handled)
}

func copyNames(m map[string]bool) map[string]bool {
	out := make(map[string]bool, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func (r *memberReplica) start(t *testing.T, ctx context.Context) {
	t.Helper()
	r.factory.Start(ctx)
	if err := r.factory.WaitForCacheSync(ctx).AsError(); err != nil {
		t.Fatalf("%s: %v", r.id, err)
	}
}

// waitMembersSettled waits until each of replicas is a member of the
// membership of all of them and owns its shard, their caches partition the
// server's ConfigMaps, each object is owned by exactly one of them, and
// each one's handlers were told exactly what its cache holds.
func waitMembersSettled(t *testing.T, ctx context.Context, client kubernetes.Interface, namespace string, replicas ...*memberReplica) {
	t.Helper()
	var ids []string
	var shards []*shardReplica
	for _, r := range replicas {
		ids = append(ids, r.id)
		shards = append(shards, r.shardReplica)
	}
	slices.Sort(ids)
	var issues []string
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		issues = nil
		for _, r := range replicas {
			if status, _ := r.factory.Membership(); !slices.Equal(status.Members, ids) || !status.Owns {
				issues = append(issues, fmt.Sprintf("%s: %+v", r.id, status))
			}
		}
		list, err := client.CoreV1().ConfigMaps(namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		want := map[string]bool{}
		for i := range list.Items {
			cm := &list.Items[i]
			want[cm.Name] = true
			var owners []string
			for _, r := range replicas {
				if r.informer.Ownership().Owns(cm) {
					owners = append(owners, r.id)
				}
			}
			if len(owners) != 1 {
				issues = append(issues, fmt.Sprintf("%s owned by %v", cm.Name, owners))
			}
		}
		issues = append(issues, partitionIssues(shards, want)...)
		for _, r := range replicas {
			if handled, cached := r.handlerNames(), r.names(); len(handled) != len(cached) || len(partitionIssuesOf(handled, cached)) > 0 {
				issues = append(issues, fmt.Sprintf("%s: its handlers were told of %d ConfigMaps, its cache holds %d", r.id, len(handled), len(cached)))
			}
		}
		return len(issues) == 0, nil
	})
	if err != nil {
		t.Fatalf("%v: not settled on %v: %d issues, first: %v", err, ids, len(issues), issues[:min(5, len(issues))])
	}
}

// partitionIssuesOf says how got differs from want.
func partitionIssuesOf(got, want map[string]bool) []string {
	var issues []string
	for name := range want {
		if !got[name] {
			issues = append(issues, "missing "+name)
		}
	}
	for name := range got {
		if !want[name] {
			issues = append(issues, "extra "+name)
		}
	}
	return issues
}

// TestMembershipOnTheServer scales replicas with a Lease membership
// 1 -> 3 -> 2 (one leaves cleanly) -> 4 under churn (creates, updates,
// deletes), with the ShardedListAndWatch gate off and on: at every sample
// (every few ms, and between the steps) every stable ConfigMap is in some
// replica's cache; once each step has settled, the caches partition the
// server's ConfigMaps, each is owned by exactly one replica, and each
// replica's handlers were told, through their adds and deletes, exactly
// what its cache holds.
func TestMembershipOnTheServer(t *testing.T) {
	n := shardObjects(t, minShardObjects)
	forEachShardServer(t, func(t *testing.T, server *apiserver.Server, gate bool) {
		ctx := testContext(t)
		config := fastConfig(server.Config)
		client := kubernetes.NewForConfigOrDie(config)
		// A name of its own: the test may run more than once on one server.
		namespace := generateNamespace(t, client, "members-"+map[bool]string{true: "on", false: "off"}[gate]+"-")
		createConfigMaps(t, client, namespace, n)
		stable, err := serverNames(ctx, client, namespace)
		if err != nil {
			t.Fatal(err)
		}
		a := newMemberReplica(t, config, namespace, "a")
		a.start(t, ctx)
		waitMembersSettled(t, ctx, client, namespace, a)

		churn := startChurn(client, namespace)
		sampler := startSampling([]*shardReplica{a.shardReplica}, stable)
		live := []*memberReplica{a}
		join := func(ids ...string) {
			for _, id := range ids {
				r := newMemberReplica(t, config, namespace, id)
				sampler.add(r.shardReplica) // sampled from before it joins
				r.start(t, ctx)
				live = append(live, r)
				sampler.sample()
			}
		}
		started := time.Now()
		join("b", "c")
		waitMembersSettled(t, ctx, client, namespace, live...)
		t.Logf("1 -> 3 settled in %v", time.Since(started))

		started = time.Now()
		b := live[1]
		b.factory.Shutdown() // leaves cleanly: the others hold its objects first
		sampler.remove(b.shardReplica)
		live = slices.Delete(live, 1, 2)
		sampler.sample()
		waitMembersSettled(t, ctx, client, namespace, live...)
		t.Logf("3 -> 2 settled in %v", time.Since(started))

		started = time.Now()
		join("d", "e")
		waitMembersSettled(t, ctx, client, namespace, live...)
		t.Logf("2 -> 4 settled in %v", time.Since(started))

		samples, missing := sampler.stop()
		churn.Stop()
		if len(missing) > 0 {
			t.Errorf("stable ConfigMaps in no replica's cache (%d samples): %v", samples, missing[:min(5, len(missing))])
		}
		waitMembersSettled(t, ctx, client, namespace, live...)
		t.Logf("%d objects, %d samples, %d writes during the scaling", n, samples, churn.writes.Load())
	})
}

// TestMembershipTakeover cuts one of three replicas off from the API
// server for good, as a crash or a partition would, without it releasing
// its Lease: it owns nothing once it could not renew its Lease for
// RenewDeadline, and the other two hold and own all the ConfigMaps once
// they see its Lease expire (LeaseDuration) and have resharded. The
// takeover time, from the cut to the two owning everything, is reported.
// Controllers on all three reconcile every ConfigMap's updates throughout:
// no ConfigMap is reconciled by two replicas at once.
func TestMembershipTakeover(t *testing.T) {
	n := 1000
	forEachShardServer(t, func(t *testing.T, server *apiserver.Server, gate bool) {
		ctx := testContext(t)
		config := fastConfig(server.Config)
		client := kubernetes.NewForConfigOrDie(config)
		// A name of its own: the test may run more than once on one server.
		namespace := generateNamespace(t, client, "takeover-"+map[bool]string{true: "on", false: "off"}[gate]+"-")
		createConfigMaps(t, client, namespace, n)
		rec := &overlaps{inProgress: map[string]string{}}
		var replicas []*memberReplica
		for _, id := range []string{"a", "b", "c"} {
			r := newMemberReplica(t, config, namespace, id)
			c, err := controller.New("takeover", controller.For(r.informer), rec.reconcile(id), controller.WithWorkers(4))
			if err != nil {
				t.Fatal(err)
			}
			runUntilCleanup(t, ctx, c)
			r.start(t, ctx)
			replicas = append(replicas, r)
		}
		waitMembersSettled(t, ctx, client, namespace, replicas...)
		touch := startTouching(client, namespace, n)

		cut := replicas[1]
		// Reconnected at the end (Cleanup runs last first), so that its
		// Shutdown leaves at once rather than at LeaveTimeout.
		t.Cleanup(func() { cut.cut.Store(false) })
		before := time.Now()
		cut.cut.Store(true)
		steppedDown := make(chan time.Duration, 1)
		go func() {
			_ = wait.PollUntilContextCancel(ctx, 5*time.Millisecond, true, func(context.Context) (bool, error) {
				status, _ := cut.factory.Membership()
				return status.SteppedDown, nil
			})
			steppedDown <- time.Since(before)
		}()
		waitMembersSettled(t, ctx, client, namespace, replicas[0], replicas[2])
		takeover := time.Since(before)
		stepDown := <-steppedDown
		if status, _ := cut.factory.Membership(); !status.SteppedDown || status.Owned != "none" {
			t.Errorf("the cut-off replica: %+v, want it stepped down, owning nothing", status)
		}
		touch.Stop()
		rec.mu.Lock()
		defer rec.mu.Unlock()
		if len(rec.overlapping) > 0 {
			t.Errorf("%d reconciles overlapped one of another replica: %v", len(rec.overlapping), rec.overlapping[:min(5, len(rec.overlapping))])
		}
		t.Logf("the cut-off replica stepped down in %v, the others took over in %v (LeaseDuration %v, RenewDeadline %v), %d reconciles, %d updates",
			stepDown, takeover, memberTimings.LeaseDuration, memberTimings.RenewDeadline, rec.reconciles, touch.writes.Load())
		if stepDown >= takeover {
			t.Errorf("the cut-off replica stepped down %v after the cut, after the others had taken over (%v)", stepDown, takeover)
		}
		if bound := memberTimings.LeaseDuration + time.Minute; takeover > bound {
			t.Errorf("takeover took %v, want within LeaseDuration and a reshard (bounded here by %v)", takeover, bound)
		}
	})
}

// overlaps counts the reconciles of controllers on several replicas that
// overlap a reconcile of the same key by another replica.
type overlaps struct {
	mu          sync.Mutex
	inProgress  map[string]string
	overlapping []string
	reconciles  int
}

func (o *overlaps) reconcile(replica string) controller.Reconciler {
	return func(ctx context.Context, key cache.ObjectName) (controller.Result, error) {
		o.mu.Lock()
		if other, ok := o.inProgress[key.String()]; ok {
			o.overlapping = append(o.overlapping, fmt.Sprintf("%s by %s and %s", key, other, replica))
		}
		o.inProgress[key.String()] = replica
		o.reconciles++
		o.mu.Unlock()
		select { // long enough for an overlap to be seen
		case <-time.After(5 * time.Millisecond):
		case <-ctx.Done():
		}
		o.mu.Lock()
		delete(o.inProgress, key.String())
		o.mu.Unlock()
		return controller.Result{}, nil
	}
}

// runUntilCleanup runs c until the test ends, and checks Run's error.
func runUntilCleanup(t *testing.T, ctx context.Context, c *controller.Controller) {
	t.Helper()
	runCtx, stop := context.WithCancel(ctx)
	running := runController(runCtx, c)
	t.Cleanup(func() {
		stop()
		if err := running.wait(); err != nil {
			t.Errorf("controller Run: %v", err)
		}
	})
}

// toucher updates the ConfigMaps stable-0 … stable-(n-1) in turn, until
// stopped.
type toucher struct {
	stop   chan struct{}
	done   sync.WaitGroup
	writes atomic.Int64
}

func startTouching(client kubernetes.Interface, namespace string, n int) *toucher {
	t := &toucher{stop: make(chan struct{})}
	cms := client.CoreV1().ConfigMaps(namespace)
	t.done.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-t.stop:
				return
			default:
			}
			patch := fmt.Appendf(nil, `{"data":{"touched":"%d"}}`, i)
			if _, err := cms.Patch(context.Background(), fmt.Sprintf("stable-%d", i%n), types.MergePatchType, patch, metav1.PatchOptions{}); err == nil {
				t.writes.Add(1)
			}
		}
	})
	return t
}

func (t *toucher) Stop() {
	close(t.stop)
	t.done.Wait()
}

// TestMembershipBesideACRDNotInstalled is issue 45's "a sharded deployment
// with one informer of a kind not installed yet never owns anything":
// three replicas in one Lease group, each with a ConfigMap informer and,
// in the second case, an informer of a resource whose CRD is not installed
// (NotServed, as any controller started before its CRD has), settle to an
// exact partition of the ConfigMaps, each owned by exactly one replica, in
// about the time the group without it takes (both are logged). Before, the
// group with it owned nothing after 30 s: widening waited for the NotServed
// informer to list, which it never does.
func TestMembershipBesideACRDNotInstalled(t *testing.T) {
	notInstalled := schema.GroupVersionResource{Group: "notyet.example.com", Version: "v1", Resource: "gadgets"}
	ctx := testContext(t)
	config := fastConfig(shared.Config)
	client := kubernetes.NewForConfigOrDie(config)
	tests := []struct {
		name         string
		notInstalled bool
	}{
		{name: "ConfigMaps alone", notInstalled: false},
		{name: "beside a CRD not installed", notInstalled: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			namespace := generateNamespace(t, client, "notserved-")
			createConfigMaps(t, client, namespace, 300)
			started := time.Now()
			var replicas []*memberReplica
			for _, id := range []string{"a", "b", "c"} {
				r := newMemberReplica(t, config, namespace, id)
				if tc.notInstalled {
					if _, err := typed.UnstructuredFor(r.factory, notInstalled); err != nil {
						t.Fatal(err)
					}
				}
				r.factory.Start(ctx) // its WaitForCacheSync would wait for the NotServed informer
				replicas = append(replicas, r)
			}
			waitMembersSettled(t, ctx, client, namespace, replicas...)
			t.Logf("three replicas settled in %v", time.Since(started))
			if !tc.notInstalled {
				return
			}
			for _, r := range replicas {
				if got := r.factory.Statuses()[notInstalled].State; got != generic.NotServed {
					t.Errorf("%s: the informer of %s is %v, want NotServed", r.id, notInstalled.Resource, got)
				}
			}
		})
	}
}
