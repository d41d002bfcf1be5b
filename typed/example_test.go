package typed_test

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/cache"

	"github.com/generic-informers/generic/typed"
)

// exampleClients stands in for a cluster: client-go's fake dynamic client
// holding one Pod, and a RESTMapper that knows Pods. Against a cluster, use
// typed.NewFactory(restConfig, scheme.Scheme) instead.
func exampleClients() typed.Clients {
	pod := &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web-0"},
		Spec:       corev1.PodSpec{NodeName: "node-1"},
	}
	podsGVR := schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(scheme.Scheme,
		map[schema.GroupVersionResource]string{podsGVR: "PodList"}, pod)
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(corev1.SchemeGroupVersion.WithKind("Pod"), meta.RESTScopeNamespace)
	return typed.Clients{Dynamic: client, RESTMapper: mapper}
}

// A typed informer for a built-in type: the Lister returns *corev1.Pod and
// delete handlers get the Pod, tombstones unwrapped.
func ExampleInformerFor() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	factory, err := typed.NewFactoryForClients(exampleClients(), scheme.Scheme)
	if err != nil {
		panic(err)
	}
	defer factory.Shutdown()
	pods, err := typed.InformerFor[*corev1.Pod](factory)
	if err != nil {
		panic(err)
	}
	_, err = pods.AddEventHandler(cache.TypedResourceEventHandlerFuncs[*corev1.Pod]{
		DeleteFunc: func(deleted cache.DeletedObject[*corev1.Pod]) {
			fmt.Println("deleted", deleted.GetKey()) // also when only a tombstone was left
		},
	})
	if err != nil {
		panic(err)
	}
	factory.Start(ctx)
	if err := factory.WaitForCacheSync(ctx).AsError(); err != nil {
		panic(err)
	}

	pod, err := pods.Lister().Namespace("default").Get("web-0") // a *corev1.Pod: no cast
	if err != nil {
		panic(err)
	}
	fmt.Println(pod.Name, "runs on", pod.Spec.NodeName)
	// Output: web-0 runs on node-1
}
