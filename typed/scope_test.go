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
	check(t, factory.WaitForCacheSync(t.Context()).AsError())

	objs, err := namespaces.Lister().List(labels.Everything())
	check(t, err)
	if diff := cmp.Diff([]string{"default", "team-a"}, names(objs)); diff != "" {
		t.Errorf("namespaces (-want +got):\n%s", diff)
	}
}

// TestOptionsSelectPerInformer: Options given to UnstructuredFor give an informer
// of the one factory a selection of its own, here a label selector on the
// unstructured informer of a resource whose typed informer sees all.
func TestOptionsSelectPerInformer(t *testing.T) {
	factory, err := labelledNamespacesFactory()
	check(t, err)
	defer factory.Shutdown()
	all, err := typed.InformerFor[*corev1.Namespace](factory)
	check(t, err)
	teams, err := typed.UnstructuredFor(factory, namespacesGVR, generic.WithLabelSelector("team"))
	check(t, err)
	factory.Start(t.Context())
	check(t, factory.WaitForCacheSync(t.Context()).AsError())

	allObjs, err := all.Lister().List(labels.Everything())
	check(t, err)
	teamObjs, err := teams.Lister().List(labels.Everything())
	check(t, err)
	if diff := cmp.Diff([][]string{{"default", "team-a"}, {"team-a"}}, [][]string{names(allObjs), names(teamObjs)}); diff != "" {
		t.Errorf("cached by the typed and the selected informer (-want +got):\n%s", diff)
	}
}

// TestFactoryTweakSelects: a list-options tweak given to the typed
// factory selects what its informers cache, typed and unstructured, as a
// label selector would; its selector was overwritten, and every object
// cached.
func TestFactoryTweakSelects(t *testing.T) {
	tweak := generic.WithTweakListOptions(func(options *metav1.ListOptions) { options.LabelSelector = "team" })
	factory, err := labelledNamespacesFactory(tweak)
	check(t, err)
	defer factory.Shutdown()
	typedNamespaces, err := typed.InformerFor[*corev1.Namespace](factory)
	check(t, err)
	unstructuredNamespaces, err := typed.UnstructuredFor(factory, namespacesGVR)
	check(t, err)
	factory.Start(t.Context())
	check(t, factory.WaitForCacheSync(t.Context()).AsError())

	typedObjs, err := typedNamespaces.Lister().List(labels.Everything())
	check(t, err)
	unstructuredObjs, err := unstructuredNamespaces.Lister().List(labels.Everything())
	check(t, err)
	if diff := cmp.Diff([][]string{{"team-a"}, {"team-a"}}, [][]string{names(typedObjs), names(unstructuredObjs)}); diff != "" {
		t.Errorf("cached by the typed and the unstructured informer (-want +got):\n%s", diff)
	}
}

// labelledNamespacesFactory is a factory, with opts, over a fake dynamic
// client serving two Namespaces: "default", unlabelled, and "team-a",
// labelled team=a.
func labelledNamespacesFactory(opts ...generic.FactoryOption) (*typed.Factory, error) {
	labelled := func(name string, labels map[string]string) *corev1.Namespace {
		return &corev1.Namespace{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"}, ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
	}
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(scheme.Scheme,
		map[schema.GroupVersionResource]string{namespacesGVR: "NamespaceList"},
		labelled("default", nil), labelled("team-a", map[string]string{"team": "a"}))
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(corev1.SchemeGroupVersion.WithKind("Namespace"), meta.RESTScopeRoot)
	return typed.NewFactoryForClients(typed.Clients{Dynamic: client, RESTMapper: mapper}, scheme.Scheme, opts...)
}
