package metadata_test

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	metadatafake "k8s.io/client-go/metadata/fake"

	metadatainformer "github.com/generic-informers/generic/metadata"
)

// exampleClient stands in for a cluster: client-go's fake metadata client
// holding the metadata of one Pod. Against a cluster, use
// metadata.NewForConfig.
func exampleClient() *metadatafake.FakeMetadataClient {
	scheme := metadatafake.NewTestScheme()
	_ = metav1.AddMetaToScheme(scheme)
	return metadatafake.NewSimpleMetadataClient(scheme, &metav1.PartialObjectMetadata{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web-0", Labels: map[string]string{"app": "web"}},
	})
}

var pods = schema.GroupVersionResource{Version: "v1", Resource: "pods"}

// Code written for client-go's metadatainformer compiles and behaves the
// same with the import path changed.
func ExampleNewSharedInformerFactory() {
	stop := make(chan struct{})
	defer close(stop)

	factory := metadatainformer.NewSharedInformerFactory(exampleClient(), 0)
	defer factory.Shutdown()
	informer := factory.ForResource(pods)
	factory.Start(stop)
	factory.WaitForCacheSync(stop)

	obj, err := informer.Lister().ByNamespace("default").Get("web-0")
	if err != nil {
		panic(err)
	}
	fmt.Println(obj.(*metav1.PartialObjectMetadata).GetName())
	// Output: web-0
}
