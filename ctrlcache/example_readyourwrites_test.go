package ctrlcache_test

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/ctrlcache"
)

// controller-runtime's read-your-writes consistency works with this cache:
// after a write through the manager's client, its reads wait until the
// cache has the write, also for a write outside an informer's selection
// (docs/controller-runtime.md, "Read-your-writes").
func ExampleNew_readYourWrites() {
	mgr, err := manager.New(cfg, manager.Options{
		NewCache: ctrlcache.New,
		Client: client.Options{Cache: &client.CacheOptions{
			EnableReadYourWritesConsistency: ptr.To(true),
		}},
	})
	if err != nil {
		panic(err)
	}
	_ = mgr
}

// Watches that end every 30 s bound a read's wait for a write outside an
// informer's selection to about 30 s instead of a minute: kube-apiserver
// sends a bookmark 2 s before a watch ends, and the informer watches
// again from where it was.
func ExampleBuilderWithOptions_shortWatches() {
	mgr, err := manager.New(cfg, manager.Options{
		NewCache: ctrlcache.BuilderWithOptions(ctrlcache.Options{Informer: []generic.InformerOption{
			generic.WithTweakListOptions(func(o *metav1.ListOptions) {
				if o.Watch {
					o.TimeoutSeconds = ptr.To[int64](30)
				}
			}),
		}}),
		Client: client.Options{Cache: &client.CacheOptions{
			EnableReadYourWritesConsistency: ptr.To(true),
		}},
	})
	if err != nil {
		panic(err)
	}
	_ = mgr
}
