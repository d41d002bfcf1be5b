package generic_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/internal/shardcheck"
	"github.com/generic-informers/generic/internal/shardsel"
)

// replica is one sharded factory of the tests, as one replica of a
// controller would run it.
type replica struct {
	factory  *generic.Factory[*corev1.ConfigMap]
	informer generic.Informer[*corev1.ConfigMap]

	mu sync.Mutex
	// changes are the adds after the initial list, and the deletes, that
	// its handlers got, in order (Key and Tombstone set).
	changes []event
}

func startReplica(t *testing.T, ctx context.Context, server *shardServer, opts ...generic.InformerOption) *replica {
	t.Helper()
	r := &replica{factory: newFactory[*corev1.ConfigMap](server.Source, nil, asFactoryOptions(opts)...)}
	r.informer = acquire(r.factory, configMapsGVR)
	_, err := r.informer.AddEventHandler(cache.TypedResourceEventHandlerDetailedFuncs[*corev1.ConfigMap]{
		AddFunc: func(cm *corev1.ConfigMap, isInInitialList bool) {
			if !isInInitialList {
				r.record(event{Verb: "ADDED", Key: keyOrEmpty(cm)})
			}
		},
		DeleteFunc: func(deleted cache.DeletedObject[*corev1.ConfigMap]) {
			r.record(event{Verb: "DELETED", Key: deleted.GetKey(), Tombstone: deleted.FinalStateUnknown != nil})
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	r.factory.Start(ctx)
	t.Cleanup(r.factory.Shutdown)
	if err := r.factory.WaitForCacheSync(ctx).AsError(); err != nil {
		t.Fatal(err)
	}
	return r
}

func (r *replica) record(e event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.changes = append(r.changes, e)
}

// handled returns the changes its handlers got so far.
func (r *replica) handled() []event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.changes)
}

// waitFor waits until r's handlers have got a change of verb (an add after
// the initial list, or a delete) for each of keys, or until ctx ends, and
// returns those they have not.
func (r *replica) waitFor(ctx context.Context, verb string, keys []string) []string {
	var missed []string
	_ = wait.PollUntilContextCancel(ctx, 10*time.Millisecond, true, func(context.Context) (bool, error) {
		got := map[string]bool{}
		for _, e := range r.handled() {
			got[e.Key] = got[e.Key] || e.Verb == verb
		}
		missed = slices.DeleteFunc(slices.Clone(keys), func(key string) bool { return got[key] })
		return len(missed) == 0, nil
	})
	return missed
}

// keys returns the namespace/name keys its cache holds.
func (r *replica) keys() map[string]bool { return cachedKeys(r.informer) }

func (r *replica) names() map[string]bool {
	names := map[string]bool{}
	for _, key := range r.informer.Informer().GetIndexer().ListKeys() {
		names[strings.TrimPrefix(key, "default/")] = true
	}
	return names
}

// partitionProblems says how the replicas' caches fail to partition want.
func partitionProblems(replicas []*replica, want map[string]bool) []string {
	var caches []map[string]bool
	for _, r := range replicas {
		caches = append(caches, r.names())
	}
	return shardcheck.Problems(caches, want)
}

// waitForPartition waits until the replicas partition the server's objects.
func waitForPartition(t *testing.T, ctx context.Context, server *shardServer, replicas []*replica) {
	t.Helper()
	var problems []string
	err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		problems = partitionProblems(replicas, server.names())
		return len(problems) == 0, nil
	})
	if err != nil {
		t.Fatalf("the replicas do not partition the server's objects: %d problems, first ones: %v", len(problems), problems[:min(5, len(problems))])
	}
}

// serverKinds are the servers the sharding tests run against: with the
// ShardedListAndWatch gate on or off, with WatchList or plain lists.
var serverKinds = []struct {
	name              string
	honours, listOnly bool
}{
	{"gate on, WatchList", true, false},
	{"gate off, WatchList", false, false},
	{"gate on, list", true, true},
	{"gate off, list", false, true},
}

func TestShardsPartitionTheObjects(t *testing.T) {
	for _, c := range serverKinds {
		for _, count := range []int{1, 2, 4} {
			honours := c.honours
			t.Run(fmt.Sprintf("%s/n=%d", c.name, count), func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				server := newShardServer(c.honours, c.listOnly)
				server.create("before", 400)
				var replicas []*replica
				for i := range count {
					replicas = append(replicas, startReplica(t, ctx, server, generic.WithShard(i, count)))
				}
				// Changes after the initial sync reach the right replica.
				server.create("after", 100)
				for i := range 50 {
					server.delete(fmt.Sprintf("before-%d", 2*i))
				}
				waitForPartition(t, ctx, server, replicas)

				for i, r := range replicas {
					size := len(r.names())
					if fair := 450 / count; size < fair*75/100 || size > fair*125/100 {
						t.Errorf("replica %d holds %d objects, want %d ± 25%%", i, size, fair)
					}
					got := r.informer.Status()
					want := generic.Status{Shard: fmt.Sprintf("%d/%d", i, count), ShardFilteredByClient: !honours && count > 1,
						CurrentShard: generic.Shard{Index: i, Count: count}}
					if count == 1 {
						want.Shard = ""
					}
					if diff := cmp.Diff(want, generic.Status{Shard: got.Shard, ShardFilteredByClient: got.ShardFilteredByClient, CurrentShard: got.CurrentShard}); diff != "" {
						t.Errorf("replica %d Status (-want +got):\n%s", i, diff)
					}
				}
			})
		}
	}
}

// TestShardSelectorOnTheWire checks the ShardSelector every request carries
// against the examples of metav1.ListOptions.ShardSelector's doc, and that
// the server's grammar accepts it.
func TestShardSelectorOnTheWire(t *testing.T) {
	tests := []struct {
		name string
		opts []generic.InformerOption
		want string
	}{
		{"every object", []generic.InformerOption{generic.WithShard(0, 1)}, ""},
		{"no shard", nil, ""},
		{"0/2", []generic.InformerOption{generic.WithShard(0, 2)}, "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')"},
		{"1/2", []generic.InformerOption{generic.WithShard(1, 2)}, "shardRange(object.metadata.uid, '0x8000000000000000', '0x10000000000000000')"},
		{"1/4", []generic.InformerOption{generic.WithShard(1, 4)}, "shardRange(object.metadata.uid, '0x4000000000000000', '0x8000000000000000')"},
		{"3/4", []generic.InformerOption{generic.WithShard(3, 4)}, "shardRange(object.metadata.uid, '0xc000000000000000', '0x10000000000000000')"},
		{"1/3", []generic.InformerOption{generic.WithShard(1, 3)}, "shardRange(object.metadata.uid, '0x5555555555555555', '0xaaaaaaaaaaaaaaaa')"},
		{"by namespace", []generic.InformerOption{generic.WithShard(0, 2), generic.WithShardKey(generic.ShardByNamespace)}, "shardRange(object.metadata.namespace, '0x0000000000000000', '0x8000000000000000')"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			server := newShardServer(true, true)
			server.create("cm", 10)
			startReplica(t, ctx, server, tt.opts...)
			for _, got := range server.requestedSelectors() {
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Fatalf("ShardSelector (-want +got):\n%s", diff)
				}
				if got != "" {
					if _, err := shardcheck.ParseSelector(got); err != nil {
						t.Fatal(err)
					}
				}
			}
		})
	}
}

// TestInvalidShardIsAnError is defect 5: an invalid shard or shard key
// was taken without a word, and the informer stayed Syncing for ever,
// retrying a list that failed with its error (WithShard(0, 0) was taken as
// every object). Each must be refused where it is given: by NewFactory, by
// Acquire for an informer's own, and by NewInformer.
func TestInvalidShardIsAnError(t *testing.T) {
	tests := []struct {
		name string
		opts []generic.InformerOption
		want string
	}{
		{"index = count", []generic.InformerOption{generic.WithShard(2, 2)}, "invalid shard 2/2"},
		{"index > count", []generic.InformerOption{generic.WithShard(5, 3)}, "invalid shard 5/3"},
		{"negative index", []generic.InformerOption{generic.WithShard(-1, 2)}, "invalid shard -1/2"},
		{"negative count", []generic.InformerOption{generic.WithShard(0, -3)}, "invalid shard 0/-3"},
		{"zero count", []generic.InformerOption{generic.WithShard(0, 0)}, "invalid shard 0/0: count must be at least 1"},
		{"unknown key", []generic.InformerOption{generic.WithShard(0, 2), generic.WithShardKey("object.metadata.name")}, "unknown ShardKey"},
	}
	server := newShardServer(true, false)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, errFactory := generic.NewFactory[*corev1.ConfigMap](server.Source, nil, asFactoryOptions(tt.opts)...)
			factory := newFactory[*corev1.ConfigMap](server.Source, nil)
			defer factory.Shutdown()
			_, errAcquire := factory.Acquire(configMapsGVR, tt.opts...)
			_, errInformer := generic.NewInformer[*corev1.ConfigMap](server.Source(configMapsGVR, "", nil), configMapsGVR, nil, tt.opts...)
			for name, err := range map[string]error{"NewFactory": errFactory, "Acquire": errAcquire, "NewInformer": errInformer} {
				if err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Errorf("%s = %v, want an error containing %q", name, err, tt.want)
				}
			}
			if diff := cmp.Diff(map[schema.GroupVersionResource]generic.Status{}, factory.Statuses()); diff != "" {
				t.Errorf("the refused Acquire left an informer (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReshardErrors(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	server := newShardServer(true, false)
	r := startReplica(t, ctx, server, generic.WithShard(0, 2))
	for _, invalid := range []generic.Shard{{Index: 3, Count: 3}, {Index: 0, Count: 0}, {Index: -1, Count: 2}} {
		// Refused at once: a context that has ended already would turn a
		// wait into its error instead.
		done, cancelDone := context.WithCancel(ctx)
		cancelDone()
		err := r.factory.Reshard(done, invalid)
		if err == nil || !strings.Contains(err.Error(), "invalid shard") || errors.Is(err, context.Canceled) {
			t.Errorf("Reshard(%d/%d) = %v, want an invalid shard error", invalid.Index, invalid.Count, err)
		}
	}
	if err := r.factory.BeginReshard(ctx, generic.Shard{Index: 0, Count: 3}); err != nil {
		t.Fatal(err)
	}
	if err := r.factory.Reshard(ctx, generic.Shard{Index: 1, Count: 3}); err == nil || !strings.Contains(err.Error(), "has begun") {
		t.Errorf("Reshard(1/3) during a reshard to 0/3 = %v, want an error", err)
	}
	if err := r.factory.Reshard(ctx, generic.Shard{Index: 0, Count: 3}); err != nil {
		t.Fatal(err)
	}
	current, next := r.factory.Shard()
	if diff := cmp.Diff(generic.Shard{Index: 0, Count: 3}, current); diff != "" || next != nil {
		t.Errorf("Shard() (-want +got):\n%s next %v", diff, next)
	}
}

// TestReshardLeavesNoObjectUncached scales two replicas to three under
// churn: the new replica syncs, the old ones widen (BeginReshard), then
// narrow (Reshard). At every sample, every object that the churn does not
// touch is in some replica's cache; after it, the three partition the
// server's objects, and each old replica's handlers got a delete for every
// object that left it and an add for every one that joined it.
func TestReshardLeavesNoObjectUncached(t *testing.T) {
	for _, c := range serverKinds {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			server := newShardServer(c.honours, c.listOnly)
			server.create("stable", 600)
			old := []*replica{
				startReplica(t, ctx, server, generic.WithShard(0, 2)),
				startReplica(t, ctx, server, generic.WithShard(1, 2)),
			}
			stable := server.names()

			stop := make(chan struct{})
			var background sync.WaitGroup
			background.Go(func() { churn(server, stop) })
			var missing []string
			var samples atomic.Int64
			all := append(slices.Clone(old), nil)
			var sampled sync.Mutex
			background.Go(func() {
				for {
					select {
					case <-stop:
						return
					case <-time.After(time.Millisecond):
					}
					sampled.Lock()
					missing = append(missing, uncached(all, stable)...)
					sampled.Unlock()
					samples.Add(1)
				}
			})

			added := startReplica(t, ctx, server, generic.WithShard(2, 3))
			sampled.Lock()
			all[2] = added
			sampled.Unlock()
			before := []map[string]bool{old[0].names(), old[1].names()}
			for i, r := range old {
				if err := r.factory.BeginReshard(ctx, generic.Shard{Index: i, Count: 3}); err != nil {
					t.Fatal(err)
				}
			}
			for i, r := range old {
				if err := r.factory.Reshard(ctx, generic.Shard{Index: i, Count: 3}); err != nil {
					t.Fatal(err)
				}
			}
			close(stop)
			background.Wait()
			if len(missing) > 0 {
				t.Errorf("objects in no replica's cache during the reshard (%d samples): %v", samples.Load(), missing[:min(5, len(missing))])
			}
			waitForPartition(t, ctx, server, []*replica{old[0], old[1], added})
			for i, r := range old {
				var left []string
				after := r.names()
				for name := range before[i] {
					if stable[name] && !after[name] {
						left = append(left, "default/"+name)
					}
				}
				if len(left) == 0 {
					t.Errorf("replica %d: no stable object left it", i)
				}
				// Reshard returns once the cache holds the new shard; the
				// handlers get the deletes from client-go's processor, which
				// may be a little behind.
				if missed := r.waitFor(ctx, "DELETED", left); len(missed) > 0 {
					t.Errorf("replica %d: %d stable objects left it, its handlers got no delete for %d: %v", i, len(left), len(missed), missed[:min(5, len(missed))])
				}
				// Replica 1 of 2 becomes 1 of 3 and gains [1/3, 1/2) of
				// the hash space; 0 of 2 becomes 0 of 3 and gains nothing.
				var joined []string
				for name := range after {
					if stable[name] && !before[i][name] {
						joined = append(joined, "default/"+name)
					}
				}
				if i == 1 && len(joined) == 0 {
					t.Errorf("replica 1: no stable object joined it")
				}
				if missed := r.waitFor(ctx, "ADDED", joined); len(missed) > 0 {
					t.Errorf("replica %d: %d stable objects joined it, its handlers got no add for %d: %v", i, len(joined), len(missed), missed[:min(5, len(missed))])
				}
				if got := r.informer.Status().Shard; got != fmt.Sprintf("%d/3", i) {
					t.Errorf("replica %d Status().Shard = %q", i, got)
				}
			}
			var widened bool
			for _, s := range server.requestedSelectors() {
				widened = widened || strings.Contains(s, " || ")
			}
			if !widened {
				t.Errorf("no request selected the union of two shards: %v", server.requestedSelectors())
			}
		})
	}
}

// churn creates and deletes objects until stop is closed.
func churn(server *shardServer, stop <-chan struct{}) {
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		default:
		}
		server.create(fmt.Sprintf("churn-%d", i), 1)
		if i >= 10 {
			server.delete(fmt.Sprintf("churn-%d-0", i-10))
		}
		time.Sleep(time.Millisecond)
	}
}

// uncached returns the objects of want in none of the replicas (nil ones
// are not started yet).
func uncached(replicas []*replica, want map[string]bool) []string {
	var missing []string
	for name := range want {
		found := false
		for _, r := range replicas {
			if r == nil {
				continue
			}
			if _, ok, _ := r.informer.Informer().GetIndexer().GetByKey("default/" + name); ok {
				found = true
				break
			}
		}
		if !found {
			missing = append(missing, name)
		}
	}
	return missing
}

// TestReshardDeliversJoinsAndLeaves reshards one replica, without churn:
// its handlers get an add for each object that joined its shard and a
// delete (carrying the object's last state) for each one that left, and
// no other add or delete; its cache then holds what a replica started at
// the new shard holds. The watch moves to the new shard itself: the
// reflector does not relist (client-go's relist backoff would pace every
// reshard step).
func TestReshardDeliversJoinsAndLeaves(t *testing.T) {
	tests := []struct {
		name     string
		from, to generic.Shard
	}{
		{"the same shard: nothing", generic.Shard{Index: 1, Count: 2}, generic.Shard{Index: 1, Count: 2}},
		{"1/2 to 1/3: joins and leaves", generic.Shard{Index: 1, Count: 2}, generic.Shard{Index: 1, Count: 3}},
		{"0/3 to 0/2: joins only", generic.Shard{Index: 0, Count: 3}, generic.Shard{Index: 0, Count: 2}},
		{"0/2 to 1/2: every object leaves, the others join", generic.Shard{Index: 0, Count: 2}, generic.Shard{Index: 1, Count: 2}},
		{"0/2 to 0/1: the other half joins", generic.Shard{Index: 0, Count: 2}, generic.Shard{Index: 0, Count: 1}},
	}
	for _, c := range serverKinds {
		for _, tt := range tests {
			t.Run(c.name+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				ctx, cancel := testContext(t)
				defer cancel()
				server := newShardServer(c.honours, c.listOnly)
				server.create("cm", 300)
				metrics := &recordingProvider{}
				r := startReplica(t, ctx, server, generic.WithShard(tt.from.Index, tt.from.Count), generic.WithMetricsProvider(metrics))
				before := r.keys()
				if got := r.handled(); len(got) > 0 {
					t.Fatalf("changes before the reshard: %v", got)
				}
				if err := r.factory.Reshard(ctx, tt.to); err != nil {
					t.Fatal(err)
				}
				after := r.keys()
				if diff := cmp.Diff(startReplica(t, ctx, server, generic.WithShard(tt.to.Index, tt.to.Count)).keys(), after); diff != "" {
					t.Errorf("cache after the reshard (-a replica started at %v +the resharded one):\n%s", tt.to, diff)
				}
				var want []event
				for key := range after {
					if !before[key] {
						want = append(want, event{Verb: "ADDED", Key: key})
					}
				}
				for key := range before {
					if !after[key] {
						want = append(want, event{Verb: "DELETED", Key: key})
					}
				}
				if tt.from != tt.to && len(want) == 0 {
					t.Fatalf("no object joined or left: the test checks nothing")
				}
				// Reshard returns once the cache holds the new shard; the
				// handlers may be a little behind. A ConfigMap of the new
				// shard created now reaches them after every change of the
				// reshard (a handler gets its notifications in order): once
				// they have its add, they have had every add and delete the
				// reshard made, and no other may come.
				server.apply(watch.Added, inShardOf(t, server, "marker", tt.to))
				want = append(want, event{Verb: "ADDED", Key: "default/marker"})
				if missed := r.waitFor(ctx, "ADDED", []string{"default/marker"}); len(missed) > 0 {
					t.Fatalf("the handlers got no add of a ConfigMap of shard %v created after the reshard; they got %v", tt.to, r.handled())
				}
				if diff := cmp.Diff(sortEvents(want), sortEvents(r.handled()), cmpopts.EquateEmpty()); diff != "" {
					t.Errorf("adds and deletes the handlers got (-want +got):\n%s", diff)
				}
				if relists := metrics.only(t).snapshot().Counters["relists"]; relists != 0 {
					t.Errorf("the reshard relisted %d times, want none", relists)
				}
			})
		}
	}
}

// inShardOf returns a new ConfigMap default/name whose UID places it in
// shard.
func inShardOf(t *testing.T, s *shardServer, name string, shard generic.Shard) *corev1.ConfigMap {
	t.Helper()
	selector, _, _ := shardsel.New(shardsel.Range{Index: shard.Index, Count: shard.Count}).Selection(string(generic.ShardByUID))
	for {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: s.newUID()}}
		if selector == nil {
			return cm // every object
		}
		in, err := selector.Matches(cm)
		if err != nil {
			t.Fatal(err)
		}
		if in {
			return cm
		}
	}
}

// cachedKeys returns the namespace/name keys the informer's cache holds.
func cachedKeys(i generic.Informer[*corev1.ConfigMap]) map[string]bool {
	keys := map[string]bool{}
	for _, key := range i.Informer().GetIndexer().ListKeys() {
		keys[key] = true
	}
	return keys
}

// TestAcquireWithShard gives WithShard to one informer (Factory.Acquire),
// not the factory: that informer holds its shard, the factory's informer of
// the same resource holds the factory's shard, a later Acquire of the same
// shard shares the informer, and Factory.Reshard moves the factory's
// informer only.
func TestAcquireWithShard(t *testing.T) {
	tests := []struct {
		name string
		// factory is the factory's shard: nil for none.
		factory *generic.Shard
		own     generic.Shard
		// reshard is where Factory.Reshard moves the factory.
		reshard generic.Shard
	}{
		{"an unsharded factory", nil, generic.Shard{Index: 0, Count: 2}, generic.Shard{Index: 1, Count: 3}},
		{"the factory's other shard", &generic.Shard{Index: 1, Count: 2}, generic.Shard{Index: 0, Count: 2}, generic.Shard{Index: 0, Count: 3}},
		{"the factory's shard, as its own", &generic.Shard{Index: 0, Count: 2}, generic.Shard{Index: 0, Count: 2}, generic.Shard{Index: 2, Count: 3}},
		{"another count", &generic.Shard{Index: 0, Count: 2}, generic.Shard{Index: 2, Count: 3}, generic.Shard{Index: 1, Count: 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel() // the reshard waits out the reflector's backoff twice
			ctx, cancel := testContext(t)
			defer cancel()
			server := newShardServer(true, false)
			server.create("cm", 300)
			var factoryOpts []generic.InformerOption
			factoryShard := generic.Shard{Index: 0, Count: 1}
			if tt.factory != nil {
				factoryShard = *tt.factory
				factoryOpts = append(factoryOpts, generic.WithShard(factoryShard.Index, factoryShard.Count))
			}
			factory := newFactory[*corev1.ConfigMap](server.Source, nil, asFactoryOptions(factoryOpts)...)
			defer factory.Shutdown()
			plain := acquire(factory, configMapsGVR)
			own := acquire(factory, configMapsGVR, generic.WithShard(tt.own.Index, tt.own.Count))
			defer own.Release()
			again := acquire(factory, configMapsGVR, generic.WithShard(tt.own.Index, tt.own.Count))
			defer again.Release()
			if again.Informer() != own.Informer() {
				t.Errorf("a second Acquire of shard %v got another informer", tt.own)
			}
			if own.Informer() == plain.Informer() {
				t.Fatalf("the informer given its own shard is the factory's")
			}
			factory.Start(ctx)
			if err := factory.WaitForCacheSync(ctx).AsError(); err != nil {
				t.Fatal(err)
			}
			holds := func(shard generic.Shard) map[string]bool {
				return startReplica(t, ctx, server, generic.WithShard(shard.Index, shard.Count)).keys()
			}
			check := func(when string, factoryShard generic.Shard) {
				t.Helper()
				got := map[string]any{
					"own":                      cachedKeys(own),
					"own Status().Shard":       own.Status().Shard,
					"factory's":                cachedKeys(plain),
					"factory's Status().Shard": plain.Status().Shard,
				}
				want := map[string]any{
					"own":                      holds(tt.own),
					"own Status().Shard":       tt.own.String(),
					"factory's":                holds(factoryShard),
					"factory's Status().Shard": "",
				}
				if factoryShard.Count > 1 {
					want["factory's Status().Shard"] = factoryShard.String()
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("%s (-want +got):\n%s", when, diff)
				}
			}
			check("after the sync", factoryShard)
			if err := factory.Reshard(ctx, tt.reshard); err != nil {
				t.Fatal(err)
			}
			check("after Factory.Reshard("+tt.reshard.String()+")", tt.reshard)
		})
	}
}

// shardedNamespaces are the namespaces TestShardByNamespace shards. Not
// "team-0", "team-1", …: FNV-1a mixes a string's last byte into the low
// bits of its hash only, so names that differ in their last character have
// the same high bits and land in the same shard (team-0 … team-9 all hash
// to 0xde90…, shard 2 of 3).
var shardedNamespaces = []string{"payments", "search", "frontend", "billing", "monitoring", "ingress", "logging", "checkout", "catalog", "auth", "storage", "batch"}

// TestShardByNamespace shards ConfigMaps of many namespaces by namespace:
// every namespace's objects are in one replica, the replicas' caches are
// disjoint and together hold every object, each holds some, and they
// filter on the client when the server lacks the gate.
func TestShardByNamespace(t *testing.T) {
	for _, c := range serverKinds {
		for _, count := range []int{2, 3} {
			t.Run(fmt.Sprintf("%s/n=%d", c.name, count), func(t *testing.T) {
				ctx, cancel := testContext(t)
				defer cancel()
				server := newShardServer(c.honours, c.listOnly)
				for _, namespace := range shardedNamespaces {
					server.createIn(namespace, "cm", 20)
				}
				var caches []map[string]bool
				var replicas []*replica
				for i := range count {
					r := startReplica(t, ctx, server, generic.WithShard(i, count), generic.WithShardKey(generic.ShardByNamespace))
					replicas = append(replicas, r)
					caches = append(caches, r.keys())
				}
				if problems := shardcheck.Problems(caches, server.keys()); len(problems) > 0 {
					t.Errorf("the replicas do not partition the objects: %d problems, first: %v", len(problems), problems[:min(5, len(problems))])
				}
				owner := map[string]int{}
				for i, keys := range caches {
					if len(keys) == 0 {
						t.Errorf("replica %d holds nothing", i)
					}
					for key := range keys {
						namespace, _, _ := strings.Cut(key, "/")
						if j, ok := owner[namespace]; ok && j != i {
							t.Errorf("namespace %s is split: %s is in replica %d, others in replica %d", namespace, key, i, j)
						}
						owner[namespace] = i
					}
				}
				for i, r := range replicas {
					if got, want := r.informer.Status().ShardFilteredByClient, !c.honours; got != want {
						t.Errorf("replica %d: Status().ShardFilteredByClient = %v, want %v", i, got, want)
					}
				}
				for _, s := range server.requestedSelectors() {
					if !strings.HasPrefix(s, "shardRange(object.metadata.namespace, ") {
						t.Fatalf("ShardSelector %q does not hash the namespace", s)
					}
				}
			})
		}
	}
}

// fallbackMessage is how the informer logs that the server ignores the
// ShardSelector.
const fallbackMessage = "The API server does not apply the ShardSelector"

// TestClientSideFallbackIsLoggedOnce runs a replica with a contextual
// logger (klog.FromContext) that keeps what it logs, and makes it relist
// three times: a server that ignores the ShardSelector is logged once,
// from the first list or watch that shows it, and never again; one that
// applies it is never logged.
func TestClientSideFallbackIsLoggedOnce(t *testing.T) {
	for _, c := range serverKinds {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel() // each relist waits out the reflector's backoff
			logger := ktesting.NewLogger(t, ktesting.NewConfig(ktesting.BufferLogs(true)))
			ctx, cancel := testContext(t)
			defer cancel()
			server := newShardServer(c.honours, c.listOnly)
			server.create("cm", 100)
			r := startReplica(t, klog.NewContext(ctx, logger), server, generic.WithShard(0, 2))

			// A relist after 410 Gone, then two (widen, narrow) for a
			// reshard, with changes in and out of the shard after each.
			lists := server.listCount()
			err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
				server.expireWatches() // until one has been expired, and the informer relisted
				return server.listCount() > lists, nil
			})
			if err != nil {
				t.Fatalf("no relist after the watches expired: %v", err)
			}
			server.create("expired", 20)
			if err := r.factory.Reshard(ctx, generic.Shard{Index: 1, Count: 2}); err != nil {
				t.Fatal(err)
			}
			server.create("resharded", 20)
			if got := server.listCount() - lists; got < 3 {
				t.Errorf("the informer listed %d more times, want at least 3", got)
			}
			waitForPartition(t, ctx, server, []*replica{r, startReplica(t, ctx, server, generic.WithShard(0, 2))})

			var logged []string
			for _, entry := range logger.GetSink().(ktesting.Underlier).GetBuffer().Data() {
				if strings.Contains(entry.Message, fallbackMessage) {
					logged = append(logged, entry.Message)
				}
			}
			want := []string(nil)
			if !c.honours {
				want = []string{fallbackMessage + " (is the ShardedListAndWatch feature gate off?); the informer filters its shard on the client"}
			}
			if diff := cmp.Diff(want, logged); diff != "" {
				t.Errorf("fallback logs (-want +got):\n%s", diff)
			}
			if got := r.informer.Status().ShardFilteredByClient; got != !c.honours {
				t.Errorf("Status().ShardFilteredByClient = %v, want %v", got, !c.honours)
			}
		})
	}
}
