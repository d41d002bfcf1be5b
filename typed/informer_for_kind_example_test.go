package typed_test

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/generic-informers/generic/typed"
)

// An informer of a kind named at run time, on a command line say: its
// objects are still decoded straight into the scheme's Go type.
func ExampleInformerForKind() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	factory, err := typed.NewFactoryForClients(exampleClients(), scheme.Scheme)
	if err != nil {
		panic(err)
	}
	defer factory.Shutdown()

	gvk := corev1.SchemeGroupVersion.WithKind("Pod") // from a flag, a config file, ...
	informer, err := typed.InformerForKind(factory, gvk)
	if err != nil {
		panic(err)
	}
	factory.Start(ctx)
	if err := factory.WaitForCacheSync(ctx).AsError(); err != nil {
		panic(err)
	}

	obj, err := informer.Lister().Namespace("default").Get("web-0") // a typed.Object
	if err != nil {
		panic(err)
	}
	fmt.Printf("%T %s\n", obj, obj.GetName())
	// Output: *v1.Pod web-0
}
