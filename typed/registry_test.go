package typed_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/generic-informers/generic/typed"
)

// TestFactoryIsOneRegistry: the typed, unstructured and metadata-only
// informers of a Factory are one Registry's: one WaitForCacheSync reports
// them all, one RemoveResource ends every informer of a resource whatever
// its kind, and the others run on.
func TestFactoryIsOneRegistry(t *testing.T) {
	factory, err := typed.NewFactoryForClients(oneFactoryClients(), scheme.Scheme)
	if err != nil {
		t.Fatal(err)
	}
	defer factory.Shutdown()
	ctx, cancel := context.WithTimeout(context.Background(), wait.ForeverTestTimeout)
	defer cancel()
	pods, err := typed.InformerFor[*corev1.Pod](factory)
	if err != nil {
		t.Fatal(err)
	}
	configMaps, err := typed.UnstructuredFor(factory, configMapsGVR)
	if err != nil {
		t.Fatal(err)
	}
	secrets, err := typed.MetadataFor(factory, secretsGVR)
	if err != nil {
		t.Fatal(err)
	}
	factory.Start(ctx)
	result := factory.WaitForCacheSync(ctx)
	var kinds []string
	for _, i := range result.Informers {
		kinds = append(kinds, i.Selection.GVR.Resource+" "+i.Selection.Type)
	}
	want := []string{"configmaps *unstructured.Unstructured", "pods *v1.Pod", "secrets *v1.PartialObjectMetadata"}
	if diff := cmp.Diff(want, kinds); diff != "" || result.Err != nil {
		t.Fatalf("WaitForCacheSync: err %v, informers (-want +got):\n%s", result.Err, diff)
	}

	select {
	case <-factory.RemoveResource(configMapsGVR):
	case <-ctx.Done():
		t.Fatal("RemoveResource: the informers did not end")
	}
	done := map[string]bool{}
	for name, ch := range map[string]<-chan struct{}{"pods": pods.Done(), "configmaps": configMaps.Done(), "secrets": secrets.Done()} {
		select {
		case <-ch:
			done[name] = true
		default:
			done[name] = false
		}
	}
	if diff := cmp.Diff(map[string]bool{"pods": false, "configmaps": true, "secrets": false}, done); diff != "" {
		t.Errorf("done after RemoveResource(configmaps) (-want +got):\n%s", diff)
	}
}
