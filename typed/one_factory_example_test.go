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
	metadatafake "k8s.io/client-go/metadata/fake"

	"github.com/generic-informers/generic/typed"
)

var (
	configMapsGVR = corev1.SchemeGroupVersion.WithResource("configmaps")
	secretsGVR    = corev1.SchemeGroupVersion.WithResource("secrets")
)

// oneFactoryClients stands in for a cluster with a Pod, a ConfigMap and a
// Secret: client-go's fake dynamic and metadata clients, and a RESTMapper
// that knows Pods. Against a cluster, typed.NewFactory(restConfig, scheme)
// makes every client itself.
func oneFactoryClients() typed.Clients {
	meta1 := func(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Namespace: "default", Name: name} }
	pod := &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}, ObjectMeta: meta1("web-0")}
	configMap := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, ObjectMeta: meta1("settings"),
		Data: map[string]string{"color": "blue"}}
	secret := &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"}, ObjectMeta: meta1("token")}
	dynamicClient := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(scheme.Scheme,
		map[schema.GroupVersionResource]string{podsGVR: "PodList", configMapsGVR: "ConfigMapList"}, pod, configMap)
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(corev1.SchemeGroupVersion.WithKind("Pod"), meta.RESTScopeNamespace)
	metadataScheme := metadatafake.NewTestScheme()
	if err := metav1.AddMetaToScheme(metadataScheme); err != nil {
		panic(err)
	}
	return typed.Clients{
		Dynamic:    dynamicClient,
		Metadata:   metadatafake.NewSimpleMetadataClient(metadataScheme, secret),
		RESTMapper: mapper,
	}
}

// One factory for every kind: Pods typed, ConfigMaps as
// *unstructured.Unstructured, Secrets metadata-only (their data never
// enters the cache). One Start, one wait, one Shutdown.
func ExampleFactory_oneForEveryKind() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	factory, err := typed.NewFactoryForClients(oneFactoryClients(), scheme.Scheme)
	if err != nil {
		panic(err)
	}
	defer factory.Shutdown()

	pods, err := typed.InformerFor[*corev1.Pod](factory) // *corev1.Pod
	if err != nil {
		panic(err)
	}
	configMaps, err := typed.UnstructuredFor(factory, configMapsGVR) // *unstructured.Unstructured
	if err != nil {
		panic(err)
	}
	secrets, err := typed.MetadataFor(factory, secretsGVR) // *metav1.PartialObjectMetadata
	if err != nil {
		panic(err)
	}
	factory.Start(ctx)
	if err := factory.WaitForCacheSync(ctx).AsError(); err != nil {
		panic(err)
	}

	pod, _ := pods.Lister().Namespace("default").Get("web-0")
	settings, _ := configMaps.Lister().Namespace("default").Get("settings")
	token, _ := secrets.Lister().Namespace("default").Get("token")
	fmt.Println(pod.Name, settings.Object["data"], token.Name)
	fmt.Println(len(factory.Statuses()), "informers")
	// Output:
	// web-0 map[color:blue] token
	// 3 informers
}
