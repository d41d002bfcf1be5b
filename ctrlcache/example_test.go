package ctrlcache_test

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/ctrlcache"
)

// cfg reaches the cluster, as ctrl.GetConfigOrDie() returns it in a
// program.
var cfg = &rest.Config{Host: "https://127.0.0.1:6443"}

// A manager takes this library's cache in one line; reconcilers, the
// client and the tests stay as they are.
func ExampleNew() {
	mgr, err := manager.New(cfg, manager.Options{
		NewCache: ctrlcache.New, // the one line
	})
	if err != nil {
		panic(err)
	}
	_ = mgr
}

// BuilderWithOptions gives the manager's cache this library's own settings:
// here, Pods in the compact store (cached in full, decoded on read).
func ExampleBuilderWithOptions() {
	mgr, err := manager.New(cfg, manager.Options{
		NewCache: ctrlcache.BuilderWithOptions(ctrlcache.Options{
			ByObject: map[client.Object][]generic.InformerOption{
				&corev1.Pod{}: {generic.WithCompactStore(256)},
			},
		}),
	})
	if err != nil {
		panic(err)
	}
	_ = mgr
}
