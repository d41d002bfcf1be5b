package unstructured_test

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apiunstructured "k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"

	dynamicinformer "github.com/generic-informers/generic/unstructured"
)

// exampleClient stands in for a cluster: client-go's fake dynamic client
// holding one Widget. Against a cluster, use dynamic.NewForConfig.
func exampleClient() *dynamicfake.FakeDynamicClient {
	small := &apiunstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"namespace": "default", "name": "small"},
		"spec":     map[string]any{"size": int64(1)},
	}}
	return dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{widgets: "WidgetList"}, small)
}

var widgets = schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}

// Code written for client-go's dynamicinformer compiles and behaves the same
// with the import path changed.
func ExampleNewDynamicSharedInformerFactory() {
	stop := make(chan struct{})
	defer close(stop)

	factory := dynamicinformer.NewDynamicSharedInformerFactory(exampleClient(), 0)
	defer factory.Shutdown()
	informer := factory.ForResource(widgets)
	factory.Start(stop)
	factory.WaitForCacheSync(stop)

	obj, err := informer.Lister().ByNamespace("default").Get("small")
	if err != nil {
		panic(err)
	}
	fmt.Println(obj.(metav1.Object).GetName())
	// Output: small
}
