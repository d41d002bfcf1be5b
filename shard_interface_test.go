package generic_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/generic-informers/generic"
)

// anyObject is an interface type of objects, as typed.Object is: the T of
// informers of a kind chosen at run time (typed.InformerForKind, and so
// every typed informer of ctrlcache), whose objects are each of their
// kind's Go type.
type anyObject interface {
	runtime.Object
	metav1.Object
}

// TestReshardOfAnInterfaceType: an informer whose T is an interface type
// moves to a new shard within its watch, as one of a Go type does
// (TestReshardDeliversJoinsAndLeaves): its reflector does not relist. A
// relist waits by client-go's backoff (0.8 s, doubling while relists come
// less than 2 minutes apart) and hands the handlers an update of every
// object held; the watch moves only with a bookmark of T, which it could
// not make of an interface type.
func TestReshardOfAnInterfaceType(t *testing.T) {
	tests := []struct {
		name string
		opts []generic.InformerOption
	}{
		{"the objects' Go type named (WithExampleObject, as typed.InformerForKind does)", []generic.InformerOption{generic.WithExampleObject(&corev1.ConfigMap{})}},
		{"no Go type named", nil},
	}
	for _, c := range serverKinds {
		for _, tt := range tests {
			t.Run(c.name+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				ctx, cancel := testContext(t)
				defer cancel()
				server := newShardServer(c.honours, c.listOnly)
				server.create("cm", 100)
				metrics := &recordingProvider{}
				factory := newFactory[anyObject](server.Source, nil, generic.WithShard(0, 2), generic.WithMetricsProvider(metrics))
				informer := acquire(factory, configMapsGVR, tt.opts...)
				factory.Start(ctx)
				t.Cleanup(factory.Shutdown)
				if err := factory.WaitForCacheSync(ctx).AsError(); err != nil {
					t.Fatal(err)
				}
				if err := factory.Reshard(ctx, generic.Shard{Index: 0, Count: 1}); err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(100, len(informer.Informer().GetIndexer().ListKeys())); diff != "" {
					t.Errorf("objects cached after the reshard to every object (-want +got):\n%s", diff)
				}
				if relists := metrics.only(t).snapshot().Counters["relists"]; relists != 0 {
					t.Errorf("the reshard relisted %d times, want none", relists)
				}
			})
		}
	}
}
