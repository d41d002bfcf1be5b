package listwatch

import (
	"context"
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
	chain := testChain[*corev1.ConfigMap](source)
	in, guard := chain.ingest, chain.guard

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
