package generic

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestTweakSelectorsAreTheSelection: the selectors a list-options tweak
// sets are part of the informer's selection, which read-your-writes waits
// (WaitForWrite, the controller's consistency wait) judge a write by: a
// write the tweak leaves out is one the server sends the informer no event
// of. They were not, and such a wait waited for an event that never came.
func TestTweakSelectorsAreTheSelection(t *testing.T) {
	configMap := func(name string, labels map[string]string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: name, Labels: labels}}
	}
	tweak := WithTweakListOptions(func(options *metav1.ListOptions) {
		options.LabelSelector = "app=web"
		options.FieldSelector = "metadata.name!=skipped"
	})
	tests := []struct {
		name         string
		obj          *corev1.ConfigMap
		wantExcluded bool
	}{
		{name: "selected", obj: configMap("settings", map[string]string{"app": "web", "tier": "a"}), wantExcluded: false},
		{name: "other labels", obj: configMap("settings", map[string]string{"app": "db", "tier": "a"}), wantExcluded: true},
		{name: "the option's label missing", obj: configMap("settings", map[string]string{"app": "web"}), wantExcluded: true},
		{name: "the tweak's field selector", obj: configMap("skipped", map[string]string{"app": "web", "tier": "a"}), wantExcluded: true},
	}
	factory, err := NewFactory[*corev1.ConfigMap](nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer factory.Shutdown()
	_, i, err := factory.acquire(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, []InformerOption{WithLabelSelector("tier=a"), tweak})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.wantExcluded, i.selection.excludes(tc.obj, nil)); diff != "" {
				t.Errorf("excluded (-want +got):\n%s", diff)
			}
		})
	}
}
