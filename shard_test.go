package generic_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/cache"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/internal/shardcheck"
)

// replica is one sharded factory of the tests, as one replica of a
// controller would run it.
type replica struct {
	factory  *generic.Factory[*corev1.ConfigMap]
	informer generic.Informer[*corev1.ConfigMap]
	deletes  atomic.Int64
}

func startReplica(t *testing.T, ctx context.Context, server *shardServer, opts ...generic.Option) *replica {
	t.Helper()
	r := &replica{factory: generic.NewFactory[*corev1.ConfigMap](server.Source, nil, opts...)}
	r.informer = r.factory.ForResource(configMapsGVR)
	_, err := r.informer.AddEventHandler(cache.TypedResourceEventHandlerFuncs[*corev1.ConfigMap]{
		DeleteFunc: func(cache.DeletedObject[*corev1.ConfigMap]) { r.deletes.Add(1) },
	})
	if err != nil {
		t.Fatal(err)
	}
	r.factory.Start(ctx)
	t.Cleanup(r.factory.Shutdown)
	if err := r.factory.WaitForCacheSyncError(ctx); err != nil {
		t.Fatal(err)
	}
	return r
}

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
					want := generic.Status{Shard: fmt.Sprintf("%d/%d", i, count), ShardFilteredByClient: !honours && count > 1}
					if count == 1 {
						want.Shard = ""
					}
					if diff := cmp.Diff(want, generic.Status{Shard: got.Shard, ShardFilteredByClient: got.ShardFilteredByClient}); diff != "" {
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
		opts []generic.Option
		want string
	}{
		{"every object", []generic.Option{generic.WithShard(0, 1)}, ""},
		{"no shard", nil, ""},
		{"0/2", []generic.Option{generic.WithShard(0, 2)}, "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')"},
		{"1/2", []generic.Option{generic.WithShard(1, 2)}, "shardRange(object.metadata.uid, '0x8000000000000000', '0x10000000000000000')"},
		{"1/4", []generic.Option{generic.WithShard(1, 4)}, "shardRange(object.metadata.uid, '0x4000000000000000', '0x8000000000000000')"},
		{"3/4", []generic.Option{generic.WithShard(3, 4)}, "shardRange(object.metadata.uid, '0xc000000000000000', '0x10000000000000000')"},
		{"1/3", []generic.Option{generic.WithShard(1, 3)}, "shardRange(object.metadata.uid, '0x5555555555555555', '0xaaaaaaaaaaaaaaaa')"},
		{"by namespace", []generic.Option{generic.WithShard(0, 2), generic.WithShardKey(generic.ShardByNamespace)}, "shardRange(object.metadata.namespace, '0x0000000000000000', '0x8000000000000000')"},
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
					if _, err := parseShardSelector(got); err != nil {
						t.Fatal(err)
					}
				}
			}
		})
	}
}

func TestInvalidShardIsAnError(t *testing.T) {
	tests := []struct {
		name string
		opts []generic.Option
		want string
	}{
		{"index = count", []generic.Option{generic.WithShard(2, 2)}, "invalid shard 2/2"},
		{"negative index", []generic.Option{generic.WithShard(-1, 2)}, "invalid shard -1/2"},
		{"negative count", []generic.Option{generic.WithShard(0, -3)}, "invalid shard 0/-3"},
		{"unknown key", []generic.Option{generic.WithShard(0, 2), generic.WithShardKey("object.metadata.name")}, "unknown ShardKey"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			server := newShardServer(true, false)
			f := generic.NewFactory[*corev1.ConfigMap](server.Source, nil, tt.opts...)
			f.ForResource(configMapsGVR)
			f.Start(ctx)
			defer f.Shutdown()
			err := f.WaitForCacheSyncError(ctx)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("WaitForCacheSyncError = %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

func TestReshardErrors(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	server := newShardServer(true, false)
	r := startReplica(t, ctx, server, generic.WithShard(0, 2))
	if err := r.factory.Reshard(ctx, generic.Shard{Index: 3, Count: 3}); err == nil || !strings.Contains(err.Error(), "invalid shard 3/3") {
		t.Errorf("Reshard(3/3) = %v, want an invalid shard error", err)
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
// object that left it.
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
				left := 0
				after := r.names()
				for name := range before[i] {
					if stable[name] && !after[name] {
						left++
					}
				}
				if left == 0 || r.deletes.Load() < int64(left) {
					t.Errorf("replica %d: %d stable objects left it, its handlers got %d deletes", i, left, r.deletes.Load())
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
