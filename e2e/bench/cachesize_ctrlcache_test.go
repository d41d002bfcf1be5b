package bench

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/ctrlcache"
)

// BenchmarkCacheSize's controller-runtime contenders (issue 47): a
// manager's cache, made as a manager makes it (controller-runtime's
// cluster.New, which manager.New calls: its HTTP client, its dynamic
// RESTMapper, the cache.NewCacheFunc of manager.Options.NewCache), with
// only DefaultLabelSelector set, so that it caches the fixture's objects;
// deep copy on (the default) in all: controller-runtime's default
// cache.New; ctrlcache.New, this library's informers under
// controller-runtime's cache.Cache; and ctrlcache with the compact store
// for the fixture's kinds (ctrlcache.Options.ByObject), its decoded
// objects full once synced, as generic-typed-compact's.
var managerCacheContenders = []cacheSizeContender{
	{"controller-runtime", managerCacheSyncer(crcache.New)},
	{"ctrlcache", managerCacheSyncer(ctrlcache.New)},
	{"ctrlcache-compact", managerCacheSyncer(ctrlcache.BuilderWithOptions(ctrlcache.Options{
		ByObject: map[client.Object][]generic.InformerOption{
			&corev1.Pod{}:       {generic.WithCompactStore(compactDecodedObjects)},
			&corev1.ConfigMap{}: {generic.WithCompactStore(compactDecodedObjects)},
		},
	}))},
}

// managerCacheSyncer syncs the informer of gvr's kind of a manager's cache
// made by newCache, limited to the objects selector selects.
func managerCacheSyncer(newCache crcache.NewCacheFunc) func(selector string) syncer {
	return func(selector string) syncer {
		return func(b *testing.B, ctx context.Context, config *rest.Config, gvr schema.GroupVersionResource) (<-chan struct{}, func()) {
			parsed, err := labels.Parse(selector)
			if err != nil {
				b.Fatal(err)
			}
			c, err := cluster.New(config, func(o *cluster.Options) {
				o.Scheme = scheme
				o.NewCache = newCache
				o.Cache.DefaultLabelSelector = parsed
			})
			if err != nil {
				b.Fatal(err)
			}
			var obj client.Object = &corev1.ConfigMap{}
			if gvr == podsGVR {
				obj = &corev1.Pod{}
			}
			runCtx, cancel := context.WithCancel(ctx)
			done := make(chan struct{})
			go func() { defer close(done); _ = c.Start(runCtx) }()
			informer, err := c.GetCache().GetInformer(runCtx, obj, crcache.BlockUntilSynced(false))
			if err != nil {
				cancel()
				<-done
				b.Fatal(err)
			}
			return syncedChannel(b, informer), func() { cancel(); <-done }
		}
	}
}
