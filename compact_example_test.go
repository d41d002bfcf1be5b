package generic_test

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/generic-informers/generic"
)

// A compact store keeps objects serialized and decodes them on read: the
// same Lister, for a fraction of the memory.
func ExampleWithCompactStore() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	server := newShardServer(true, false)
	server.apply("ADDED", &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "settings", UID: server.newUID()},
		Data: map[string]string{"color": "blue"}})
	source := server.Source

	factory, err := generic.NewFactory[*corev1.ConfigMap](source, nil,
		generic.WithCompactStore(1000)) // keep the 1,000 objects read last decoded
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
	settings, err := configMaps.Lister().Namespace("default").Get("settings") // decoded on a miss

	fmt.Println(settings.Data["color"], err)
	// Output:
	// blue <nil>
}
