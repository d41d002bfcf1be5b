package generic_test

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1informers "k8s.io/client-go/informers/core/v1"

	"github.com/generic-informers/generic"
)

// Code written against client-go's typed informers (what informer-gen
// v0.38's TypedInformer() returns, a cache.TypedSharedIndexInformer) takes
// this library's informers and Handles through generic.TypedInformer.
func ExampleTypedInformer() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	server := newShardServer(true, false)
	server.apply("ADDED", &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "settings", UID: server.newUID()},
		Data: map[string]string{"color": "blue"}})
	source := server.Source

	// Code written for client-go's typed informers.
	indexByColor := func(informer corev1informers.ConfigMapIndexInformer) error {
		return informer.AddTypedIndexers(corev1informers.ConfigMapIndexers{
			"color": func(cm *corev1.ConfigMap) ([]string, error) { return []string{cm.Data["color"]}, nil },
		})
	}

	factory, err := generic.NewFactory[*corev1.ConfigMap](source, nil)
	if err != nil {
		panic(err)
	}
	defer factory.Shutdown()
	configMaps, err := factory.Acquire(configMapsGVR)
	if err != nil {
		panic(err)
	}
	informer := generic.TypedInformer(configMaps) // a corev1informers.ConfigMapIndexInformer
	if err := indexByColor(informer); err != nil {
		panic(err)
	}
	factory.Start(ctx)
	if err := factory.WaitForCacheSync(ctx).AsError(); err != nil {
		panic(err)
	}
	blue, err := informer.GetTypedIndexer().ByTypedIndex("color", "blue")

	fmt.Println(len(blue), blue[0].Name, err)
	// Output:
	// 1 settings <nil>
}
