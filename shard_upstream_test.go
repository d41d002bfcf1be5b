package generic_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/sharding"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/cache"

	"github.com/generic-informers/generic"
)

// TestShardIsClientGosShard holds the library's WithShard(i, n) to client-go
// v0.38's sharding, against servers with the ShardedListAndWatch gate on and
// off: the ShardSelector on the wire is apimachinery's
// sharding.NewShardRangeSelector(key, i, n), and the informer caches
// exactly the objects a client-go informer over
// cache.NewShardedListWatch(lw, that selector) caches, through the server's
// filter or client-go's fallback alike. (The library keeps its own chain
// for what NewShardedListWatch's fixed selector cannot do: a selection that
// changes while the informer runs, for a reshard without a gap and for
// membership, and Status().ShardFilteredByClient; docs/sharding.md.)
func TestShardIsClientGosShard(t *testing.T) {
	shards := []struct{ index, count int }{{0, 2}, {1, 2}, {1, 3}, {3, 4}}
	for _, c := range serverKinds {
		for _, s := range shards {
			t.Run(fmt.Sprintf("%s/%d of %d", c.name, s.index, s.count), func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				server := newShardServer(c.honours, c.listOnly)
				server.create("cm", 200)
				ours := startReplica(t, ctx, server, generic.WithShard(s.index, s.count))
				server.mu.Lock()
				sent := slices.Clone(server.selectors)
				server.mu.Unlock()

				selector, err := sharding.NewShardRangeSelector("object.metadata.uid", s.index, s.count)
				if err != nil {
					t.Fatal(err)
				}
				theirs := cache.NewSharedIndexInformer(cache.NewShardedListWatch(server.Source(configMapsGVR, "", nil), selector), &corev1.ConfigMap{}, 0, cache.Indexers{})
				go theirs.RunWithContext(ctx)
				if !cache.WaitForCacheSync(ctx.Done(), theirs.HasSynced) {
					t.Fatal("client-go's informer did not sync")
				}

				if want := slices.Repeat([]string{selector.String()}, len(sent)); len(sent) == 0 || !slices.Equal(sent, want) {
					t.Errorf("ShardSelectors sent %q, want client-go's %q", sent, selector.String())
				}
				var diff string
				_ = wait.PollUntilContextCancel(ctx, 10*time.Millisecond, true, func(context.Context) (bool, error) {
					diff = cmp.Diff(keySet(theirs.GetStore().ListKeys()), ours.keys())
					return diff == "", nil
				})
				if diff != "" {
					t.Errorf("cached keys (-client-go +library):\n%s", diff)
				}
				if n := len(ours.keys()); n == 0 || n == 200 {
					t.Errorf("the shard holds %d of 200 objects: the test proves nothing", n)
				}
			})
		}
	}
}

func keySet(keys []string) map[string]bool {
	set := map[string]bool{}
	for _, k := range keys {
		set[k] = true
	}
	return set
}
