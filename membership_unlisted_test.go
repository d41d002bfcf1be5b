package generic_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/internal/shardsel"
	"github.com/generic-informers/generic/internal/widget"
)

// unlistable is how the server answers every list and watch of an informer
// that cannot list.
var unlistable = []struct {
	name   string
	answer error
	// state is the State the informer settles in.
	state generic.State
}{
	{name: "NotServed (404: a CRD not installed yet)", answer: apierrors.NewNotFound(widget.GVR.GroupResource(), ""), state: generic.NotServed},
	{name: "Forbidden (403)", answer: apierrors.NewForbidden(widget.GVR.GroupResource(), "", errors.New("RBAC")), state: generic.Forbidden},
	{name: "failing (503)", answer: apierrors.NewServiceUnavailable("the aggregated API is down"), state: generic.Syncing},
}

// answering is a ListerWatcher whose every list and watch is answered err.
func answering(err error) cache.ListerWatcher {
	return &cache.ListWatch{
		ListWithContextFunc: func(context.Context, metav1.ListOptions) (runtime.Object, error) { return nil, err },
		WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watch.Interface, error) {
			return nil, err
		},
	}
}

// startUnlistableMember starts a replica of group "g" whose factory has a
// ConfigMap informer over server and a Widget informer that the server
// answers with answer, and waits until it joined.
func startUnlistableMember(t *testing.T, ctx context.Context, server *shardServer, leases *fake.Clientset, id string, answer error) *member {
	t.Helper()
	m := &member{id: id}
	source := func(gvr schema.GroupVersionResource, namespace string, tweak generic.TweakListOptionsFunc) cache.ListerWatcher {
		if gvr == widget.GVR {
			return answering(answer)
		}
		return m.recording(server.Source(gvr, namespace, tweak))
	}
	m.replica = &replica{factory: newFactory[*corev1.ConfigMap](source, nil, generic.WithMembership(mustMember(t, memberTimings(leases, id))))}
	m.informer = acquire(m.factory, configMapsGVR)
	acquire(m.factory, widget.GVR)
	m.factory.Start(ctx)
	t.Cleanup(m.factory.Shutdown)
	if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		status, _ := m.factory.Membership()
		return status.Phase != "" && m.informer.HasSynced(), nil
	}); err != nil {
		t.Fatalf("%s did not join: %v", id, err)
	}
	return m
}

// TestMembershipSettlesBesideInformersThatCannotList is the defect "a
// sharded deployment with one informer of a kind not installed yet never
// owns anything": three replicas, each with a ConfigMap informer and one
// that cannot list (NotServed, Forbidden, or its lists failing), settle to
// an exact partition of the ConfigMaps, each owned by exactly one replica.
// Widening and narrowing used to wait for every informer to list under the
// new selection, with no deadline: no replica ever owned its shard.
func TestMembershipSettlesBesideInformersThatCannotList(t *testing.T) {
	for _, tc := range unlistable {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			server := newShardServer(true, false)
			server.create("cm", 60)
			leases := fake.NewClientset()
			var members []*member
			for _, id := range []string{"a", "b", "c"} {
				members = append(members, startUnlistableMember(t, ctx, server, leases, id, tc.answer))
			}
			waitSettled(t, ctx, server, members...)
			for _, m := range members {
				if got := m.factory.Statuses()[widget.GVR].State; got != tc.state {
					t.Errorf("%s's Widget informer is %v, want %v", m.id, got, tc.state)
				}
			}
		})
	}
}

// TestReshardBesideInformersThatCannotList: Reshard and BeginReshard return
// once the informers that can list hold the new shard; one that cannot is
// not waited for (they used to block until their context ended).
func TestReshardBesideInformersThatCannotList(t *testing.T) {
	for _, tc := range unlistable {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			server := newShardServer(true, false)
			server.create("cm", 60)
			source := func(gvr schema.GroupVersionResource, namespace string, tweak generic.TweakListOptionsFunc) cache.ListerWatcher {
				if gvr == widget.GVR {
					return answering(tc.answer)
				}
				return server.Source(gvr, namespace, tweak)
			}
			r := &replica{factory: newFactory[*corev1.ConfigMap](source, nil, generic.WithShard(0, 2))}
			r.informer = acquire(r.factory, configMapsGVR)
			acquire(r.factory, widget.GVR)
			r.factory.Start(ctx)
			defer r.factory.Shutdown()
			if !cache.WaitForCacheSync(ctx.Done(), r.informer.HasSynced) {
				t.Fatal("the ConfigMap informer did not sync")
			}
			// Long enough for any list; Reshard used to take all of it.
			reshard, cancelReshard := context.WithTimeout(ctx, time.Minute)
			defer cancelReshard()
			if err := r.factory.Reshard(reshard, generic.Shard{Index: 1, Count: 2}); err != nil {
				t.Fatalf("Reshard: %v", err)
			}
			if problems := partitionProblems([]*replica{r}, shardOf(t, server, 1, 2)); len(problems) > 0 {
				t.Errorf("after Reshard, the ConfigMap cache is not shard 1/2: %v", problems[:min(5, len(problems))])
			}
		})
	}
}

// shardOf returns the names of server's objects in shard index/count (of
// their UIDs' hash, the default ShardKey).
func shardOf(t *testing.T, server *shardServer, index, count int) map[string]bool {
	t.Helper()
	selector, _, _ := shardsel.New(shardsel.Range{Index: index, Count: count}).Selection(string(generic.ShardByUID))
	server.mu.Lock()
	defer server.mu.Unlock()
	want := map[string]bool{}
	for _, cm := range server.objects {
		in, err := selector.Matches(cm)
		if err != nil {
			t.Fatal(err)
		}
		if in {
			want[cm.Name] = true
		}
	}
	return want
}

// TestLateRegistryOfAMemberIsWaitedFor is the defect "a second registry
// sharing a Member, started after the member joined, is skipped": its
// informers ran, but the steps of later reshards did not wait for their
// caches, so ownership could move before they held the objects. Here the
// late registry's list of the narrower shard is held back: the replica
// must not narrow (announce Narrowed) until it is let through.
func TestLateRegistryOfAMemberIsWaitedFor(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	server := newShardServer(true, true)
	server.create("cm", 60)
	leases := fake.NewClientset()
	shared := mustMember(t, memberTimings(leases, "a"))

	a := &member{id: "a", replica: &replica{factory: newFactory[*corev1.ConfigMap](server.Source, nil, generic.WithMembership(shared))}}
	a.informer = acquire(a.factory, configMapsGVR)
	a.factory.Start(ctx)
	t.Cleanup(a.factory.Shutdown)
	if err := a.factory.WaitForCacheSync(ctx).AsError(); err != nil {
		t.Fatal(err)
	}

	gate := newListGate()
	lateSource := func(gvr schema.GroupVersionResource, namespace string, tweak generic.TweakListOptionsFunc) cache.ListerWatcher {
		return gate.holding(server.Source(gvr, namespace, tweak))
	}
	late := newFactory[*corev1.ConfigMap](lateSource, nil, generic.WithMembership(shared))
	lateInformer := acquire(late, configMapsGVR)
	late.Start(ctx) // after a joined
	t.Cleanup(late.Shutdown)
	if !cache.WaitForCacheSync(ctx.Done(), lateInformer.HasSynced) {
		t.Fatal("the late registry's informer did not sync")
	}
	gate.close() // from now on, a list of another shard than every object waits

	b := startMember(t, ctx, server, leases, "b")
	// a widens (it holds every object already) and then must wait for the
	// late registry's list of its narrower shard.
	if !gate.waitHeld(ctx) {
		t.Fatal("the late registry never listed a narrower shard")
	}
	// Give a every chance to narrow without it: many membership rounds.
	deadline := time.After(2 * time.Second)
	for {
		status, _ := a.factory.Membership()
		if status.Phase == "Narrowed" && slices.Equal(status.Members, []string{"a", "b"}) {
			t.Fatalf("a narrowed to %v while its late registry's list of that shard was held back", status.Shard)
		}
		select {
		case <-deadline:
		case <-time.After(10 * time.Millisecond):
			continue
		}
		break
	}
	gate.open()
	waitSettled(t, ctx, server, a, b)
	lateReplica := &replica{factory: late, informer: lateInformer}
	if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		return len(partitionProblems([]*replica{lateReplica, b.replica}, server.names())) == 0, nil
	}); err != nil {
		t.Errorf("the late registry's cache and b's do not partition the objects: %v", partitionProblems([]*replica{lateReplica, b.replica}, server.names()))
	}
}

// listGate holds back, once closed, every list of a shard narrower than
// every object (a ShardSelector), until opened.
type listGate struct {
	mu     sync.Mutex
	closed bool
	opened chan struct{}
	held   chan struct{}
	once   sync.Once
}

func newListGate() *listGate {
	return &listGate{opened: make(chan struct{}), held: make(chan struct{})}
}

func (g *listGate) close() { g.mu.Lock(); g.closed = true; g.mu.Unlock() }
func (g *listGate) open()  { close(g.opened) }

// waitHeld waits until a list was held back.
func (g *listGate) waitHeld(ctx context.Context) bool {
	select {
	case <-g.held:
		return true
	case <-ctx.Done():
		return false
	}
}

func (g *listGate) pass(ctx context.Context, o metav1.ListOptions) error {
	g.mu.Lock()
	closed := g.closed
	g.mu.Unlock()
	if !closed || o.ShardSelector == "" {
		return nil
	}
	g.once.Do(func() { close(g.held) })
	select {
	case <-g.opened:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (g *listGate) holding(lw cache.ListerWatcher) cache.ListerWatcher {
	inner := lw.(cache.ListerWatcherWithContext)
	return listOnly{&cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			if err := g.pass(ctx, o); err != nil {
				return nil, err
			}
			return inner.ListWithContext(ctx, o)
		},
		WatchFuncWithContext: inner.WatchWithContext,
	}}
}
