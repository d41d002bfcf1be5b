package typed_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/typed"
)

// TestCompactStoreOfEachKind gives a typed factory WithCompactStore: its
// typed informers (InformerFor and InformerForKind, whose T is an
// interface) and metadata-only informers keep their objects compact and read
// them back equal (TypeMeta included), and UnstructuredFor, whose objects
// have no protobuf encoding, is refused with an error naming the option.
func TestCompactStoreOfEachKind(t *testing.T) {
	factory, err := typed.NewFactoryForClients(oneFactoryClients(), scheme.Scheme, generic.WithCompactStore(10))
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
	secrets, err := typed.MetadataFor(factory, secretsGVR)
	if err != nil {
		t.Fatal(err)
	}
	byKind, err := typed.InformerForKind(factory, corev1.SchemeGroupVersion.WithKind("Pod"))
	if err != nil {
		t.Fatal(err)
	}
	_, unstructuredErr := typed.UnstructuredFor(factory, configMapsGVR)
	factory.Start(ctx)
	if err := factory.WaitForCacheSync(ctx).AsError(); err != nil {
		t.Fatal(err)
	}
	pod, podErr := pods.Lister().Namespace("default").Get("web-0")
	secret, secretErr := secrets.Lister().Namespace("default").Get("token")
	kindPod, kindPodErr := byKind.Lister().Namespace("default").Get("web-0")
	got := map[string]string{
		"pod":          fmt.Sprintf("%s %s/%s %v", pod.GetObjectKind().GroupVersionKind().Kind, pod.Namespace, pod.Name, podErr),
		"pod by kind":  fmt.Sprintf("%T %s/%s %v", kindPod, kindPod.GetNamespace(), kindPod.GetName(), kindPodErr),
		"secret":       fmt.Sprintf("%s %s/%s %v", secret.Kind, secret.Namespace, secret.Name, secretErr),
		"unstructured": fmt.Sprint(unstructuredErr),
	}
	want := map[string]string{
		"pod":          "Pod default/web-0 <nil>",
		"pod by kind":  "*v1.Pod default/web-0 <nil>",
		"secret":       "Secret default/token <nil>",
		"unstructured": "generic: WithCompactStore(10): *unstructured.Unstructured has no protobuf encoding (Marshal and Unmarshal methods, as k8s.io/api's types have)",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(&metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"}, ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "token"}}, secret); diff != "" {
		t.Errorf("the secret's metadata (-want +got):\n%s", diff)
	}
}
