package ctrlcache_test

import (
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"

	"github.com/generic-informers/generic/ctrlcache"
)

// A cache that measures its informers, for a manager: give newCache to
// manager.Options.NewCache, and the manager's metrics endpoint (which
// serves controller-runtime's metrics.Registry) serves generic_informer_*,
// the cache's size in bytes per resource among them, beside
// controller-runtime's own metrics.
func ExampleBuilderWithOptions_metrics() {
	var newCache crcache.NewCacheFunc = ctrlcache.BuilderWithOptions(ctrlcache.Options{Metrics: true})
	_ = newCache // manager.Options{NewCache: newCache}
}
