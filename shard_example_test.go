package generic_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"

	"github.com/generic-informers/generic"
)

// shardExampleClient stands in for a cluster: client-go's fake dynamic
// client holding 100 ConfigMaps, one in each of the namespaces ns-0 to
// ns-99. Like an API server without the ShardedListAndWatch feature gate, it
// ignores the shard selector, and the informers keep their shard
// themselves.
func shardExampleClient() *dynamicfake.FakeDynamicClient {
	var objs []runtime.Object
	for i := range 100 {
		objs = append(objs, &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{
				"namespace": fmt.Sprintf("ns-%d", i), "name": "settings",
				"uid": fmt.Sprintf("%016x", uint64(i+1)*0x9e3779b97f4a7c15), // random-looking, as real UIDs are
			},
		}})
	}
	return dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{configMapsGVR: "ConfigMapList"}, objs...)
}

// Replica 1 of 2 holds its shard of the ConfigMaps: those whose UID
// hashes into the upper half of the hash space. A shard that does not
// exist is refused where it is given.
func ExampleWithShard() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	client := shardExampleClient()

	// In a StatefulSet's Pod: os.Getenv("POD_NAME"), set from metadata.name.
	podName := "mycontroller-1"
	index, err := strconv.Atoi(strings.TrimPrefix(podName, "mycontroller-")) // the StatefulSet ordinal
	if err != nil {
		panic(err)
	}
	factory, err := generic.NewFactory[*unstructured.Unstructured](generic.DynamicSource(client), nil,
		generic.WithShard(index, 2))
	if err != nil {
		panic(err)
	}
	defer factory.Shutdown()
	configMaps, err := factory.Acquire(configMapsGVR)
	if err != nil {
		panic(err)
	}
	factory.Start(ctx)
	if err := factory.WaitForCacheSync(ctx).AsError(); err != nil {
		panic(err)
	}
	held, err := configMaps.Lister().List(labels.Everything())
	if err != nil {
		panic(err)
	}
	status := configMaps.Status()
	fmt.Println("shard", status.Shard, "holds", len(held), "of 100; filtered by the client:", status.ShardFilteredByClient)

	_, err = generic.NewFactory[*unstructured.Unstructured](generic.DynamicSource(client), nil, generic.WithShard(2, 2))
	fmt.Println(err)
	// Output:
	// shard 1/2 holds 52 of 100; filtered by the client: true
	// generic: invalid shard 2/2: want 0 <= index < count
}

// Sharding by namespace places whole namespaces, but FNV-1a mixes a name's
// last bytes into the low bits of the hash, and shards are ranges of its
// high bits: namespaces ns-0 to ns-99 all land in shard 0 of 2.
func ExampleWithShardKey() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	client := shardExampleClient()
	for index := range 2 {
		factory, err := generic.NewFactory[*unstructured.Unstructured](generic.DynamicSource(client), nil,
			generic.WithShard(index, 2), generic.WithShardKey(generic.ShardByNamespace))
		if err != nil {
			panic(err)
		}
		configMaps, err := factory.Acquire(configMapsGVR)
		if err != nil {
			panic(err)
		}
		factory.Start(ctx)
		if err := factory.WaitForCacheSync(ctx).AsError(); err != nil {
			panic(err)
		}
		held, _ := configMaps.Lister().List(labels.Everything())
		fmt.Printf("shard %d/2 holds %d namespaces\n", index, len(held))
		factory.Shutdown()
	}
	// Output:
	// shard 0/2 holds 100 namespaces
	// shard 1/2 holds 0 namespaces
}
