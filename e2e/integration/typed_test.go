package integration

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/internal/widget"
	"github.com/generic-informers/generic/typed"
)

// TestTypedFactoryREST reads ConfigMaps and Widgets through the typed
// factory's REST clients: ConfigMaps arrive as protobuf, Widgets (a CRD) as
// JSON, both decoded straight into their Go types; events are typed.
func TestTypedFactoryREST(t *testing.T) {
	c := newCluster(t, shared)
	apply(t, c, namespaces("typed")...)
	apply(t, c, load(t, "typed", "crds/widgets.example.com.yaml", "configmaps.yaml", "widgets.yaml")...)

	config, seen := recordContentTypes(shared.Config)
	factory, err := typed.NewFactory(config, widget.NewScheme(), generic.WithNamespace("typed-a"))
	if err != nil {
		t.Fatal(err)
	}
	defer factory.Shutdown()
	configMaps, err := typed.InformerFor[*corev1.ConfigMap](factory)
	if err != nil {
		t.Fatal(err)
	}
	widgets, err := typed.InformerFor[*widget.Widget](factory)
	if err != nil {
		t.Fatal(err)
	}
	rec := newRecorder(configMapColor)
	if _, err := configMaps.AddEventHandler(rec); err != nil {
		t.Fatal(err)
	}
	syncAll(t, factory.Start, factory.WaitForCacheSync)
	rec.next(t, 2)

	settings, err := configMaps.Lister().Namespace("typed-a").Get("settings")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff("blue", settings.Data["color"]); diff != "" {
		t.Errorf("ConfigMap data (-want +got):\n%s", diff)
	}
	small, err := widgets.Lister().Namespace("typed-a").Get("small")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(widget.Spec{Size: 1, Color: "blue", ConfigMapName: "settings"}, small.Spec); diff != "" {
		t.Errorf("Widget spec (-want +got):\n%s", diff)
	}
	all, err := widgets.Lister().List(labels.Everything())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"typed-a/large", "typed-a/small"}, keys(all)); diff != "" {
		t.Errorf("Widgets of the factory's namespace (-want +got):\n%s", diff)
	}

	// A change comes through the watch, decoded from protobuf too.
	client := kubernetes.NewForConfigOrDie(shared.Config)
	settings = settings.DeepCopy()
	settings.Data["color"] = "teal"
	if _, err := client.CoreV1().ConfigMaps("typed-a").Update(context.Background(), settings, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]event{{Verb: "MODIFIED", Key: "typed-a/settings", State: "teal"}}, rec.next(t, 1)); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}

	wire := map[string][]string{
		"configmaps": seen.of("/api/v1/namespaces/typed-a/configmaps"),
		"widgets":    seen.of("/apis/example.com/v1/namespaces/typed-a/widgets"),
	}
	// WatchList (on by default since client-go 1.35) fills the cache from a
	// watch stream, so there is no plain list response to see.
	want := map[string][]string{
		"configmaps": {"watch application/vnd.kubernetes.protobuf;stream=watch"},
		"widgets":    {"watch application/json"},
	}
	if diff := cmp.Diff(want, wire); diff != "" {
		t.Errorf("content types on the wire (-want +got):\n%s", diff)
	}
}
