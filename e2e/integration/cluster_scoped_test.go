package integration

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/internal/widget"
	"github.com/generic-informers/generic/typed"
)

var gizmosGVR = schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "gizmos"}

// TestClusterScoped reads Namespaces (built in, typed) and Gizmos (a
// cluster-scoped CRD, unstructured): keyed by name alone, found by Get, and
// the typed factory's namespace does not apply to them.
func TestClusterScoped(t *testing.T) {
	c := newCluster(t, shared)
	apply(t, c, namespaces("scope")...)
	apply(t, c, load(t, "scope", "crds/gizmos.example.com.yaml", "gizmos.yaml")...)

	typedFactory, err := typed.NewFactory(shared.Config, widget.NewScheme(),
		generic.WithNamespace("scope-a"), generic.WithTweakListOptions(nil))
	if err != nil {
		t.Fatal(err)
	}
	defer typedFactory.Shutdown()
	namespaceInformer, err := typed.InformerFor[*corev1.Namespace](typedFactory)
	if err != nil {
		t.Fatal(err)
	}
	unstructuredFactory := dynamicFactory(t, c.Dynamic, ownObjects("scope"))
	gizmos := acquire(t, unstructuredFactory, gizmosGVR)
	syncAll(t, typedFactory.Start, typedFactory.WaitForCacheSync)
	syncAll(t, unstructuredFactory.Start, unstructuredFactory.WaitForCacheSync)

	namespace, err := namespaceInformer.Lister().Get("scope-b")
	if err != nil {
		t.Fatal(err)
	}
	alpha, err := gizmos.Lister().Get("alpha")
	if err != nil {
		t.Fatal(err)
	}
	power, _, _ := unstructured.NestedInt64(alpha.Object, "spec", "power")
	gold, err := gizmos.Lister().List(labels.SelectorFromSet(labels.Set{"tier": "gold"}))
	if err != nil {
		t.Fatal(err)
	}
	allGizmos, err := gizmos.Lister().List(labels.Everything())
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]any{
		"namespace": namespace.Name,
		"power":     power,
		"gold":      keys(gold),
		"all":       keys(allGizmos),
	}
	want := map[string]any{
		"namespace": "scope-b",
		"power":     int64(9),
		"gold":      []string{"alpha"},
		"all":       []string{"alpha", "beta"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("cluster-scoped reads (-want +got):\n%s", diff)
	}
}
