package generic

import (
	"context"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
)

// TestProbeLeavesTheIngestAlone: a not-served probe's list (Limit 1) is an
// answer the reflector never takes. Made through the ingest, the probe of a
// resource with at most one object was the last page of a list: it
// replaced the ingest's record of what the cache holds and counted as a
// list of the informer's shard. It must change neither.
func TestProbeLeavesTheIngestAlone(t *testing.T) {
	gvr := corev1.SchemeGroupVersion.WithResource("configmaps")
	source := &cache.ListWatch{
		ListWithContextFunc: func(context.Context, metav1.ListOptions) (runtime.Object, error) {
			return &corev1.ConfigMapList{
				ListMeta: metav1.ListMeta{ResourceVersion: "7"},
				Items:    []corev1.ConfigMap{{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "probed"}}},
			}, nil
		},
		WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watch.Interface, error) {
			return watch.NewEmptyWatch(), nil
		},
	}
	var goroutines sync.WaitGroup
	newT, _ := newObjectFunc[*corev1.ConfigMap]()
	in := newIngest(source, gvr, Identity[*corev1.ConfigMap](), newT, func(context.Context, error) {}, &goroutines)
	machine := newStateMachine(gvr, nil, func(f func()) { f() })
	guard := newServedGuard(in, in.inner, machine, false, &goroutines)

	type ingestState struct {
		Generation uint64
		Listed     bool
	}
	stateOf := func() ingestState {
		_, listed, _ := in.shard.lastListed()
		return ingestState{Generation: in.record.current(), Listed: listed}
	}
	before := stateOf()
	if !guard.probe(context.Background()) {
		t.Fatal("the probe of a served resource said it is not served")
	}
	if diff := cmp.Diff(before, stateOf()); diff != "" {
		t.Errorf("the ingest after a probe (-before +after):\n%s", diff)
	}
}
