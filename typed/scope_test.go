package typed_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/typed"
)

// TestUnstructuredForClusterScoped: a factory limited to one namespace
// still lists a cluster-scoped resource as a whole through UnstructuredFor,
// as through InformerFor; it used to ask for it in the namespace, and the
// server answered 404.
func TestUnstructuredForClusterScoped(t *testing.T) {
	namespaceObj := func(name string) *corev1.Namespace {
		return &corev1.Namespace{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"}, ObjectMeta: metav1.ObjectMeta{Name: name}}
	}
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(scheme.Scheme,
		map[schema.GroupVersionResource]string{namespacesGVR: "NamespaceList"}, namespaceObj("default"), namespaceObj("team-a"))
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(corev1.SchemeGroupVersion.WithKind("Namespace"), meta.RESTScopeRoot)
	factory, err := typed.NewFactoryForClients(typed.Clients{Dynamic: client, RESTMapper: mapper}, scheme.Scheme, generic.WithNamespace("default"))
	check(t, err)
	defer factory.Shutdown()
	namespaces, err := typed.UnstructuredFor(factory, namespacesGVR)
	check(t, err)
	factory.Start(t.Context())
	check(t, factory.WaitForCacheSyncError(t.Context()))

	objs, err := namespaces.Lister().List(labels.Everything())
	check(t, err)
	if diff := cmp.Diff([]string{"default", "team-a"}, names(objs)); diff != "" {
		t.Errorf("namespaces (-want +got):\n%s", diff)
	}
}
