package typed_test

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/typed"
)

// Unstructured informers against a cluster, from the one factory: objects
// equal to client-go's dynamic informer's, decoded in one pass (built-in
// kinds from protobuf), with strings, managedFields and labels shared
// across objects: on realistic Pods, about half what client-go's dynamic
// informer holds (docs/performance.md). (No output: it needs a cluster.)
func ExampleUnstructuredFor() {
	ctx := context.Background()
	config, err := rest.InClusterConfig() // or clientcmd's, from a kubeconfig
	if err != nil {
		panic(err)
	}
	factory, err := typed.NewFactory(config, scheme.Scheme) // client-go's scheme: the built-in kinds
	if err != nil {
		panic(err)
	}
	defer factory.Shutdown()
	pods, err := typed.UnstructuredFor(factory, corev1.SchemeGroupVersion.WithResource("pods"),
		generic.WithStripManagedFields())
	if err != nil {
		panic(err)
	}
	factory.Start(ctx)
	if err := factory.WaitForCacheSync(ctx).AsError(); err != nil {
		panic(err)
	}
	pod, err := pods.Lister().Namespace("default").Get("web-0") // an *unstructured.Unstructured
	if err != nil {
		panic(err)
	}
	_ = pod
}
