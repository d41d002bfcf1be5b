package typed_test

import (
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	clientfeatures "k8s.io/client-go/features"
	clientfeaturestesting "k8s.io/client-go/features/testing"
	"k8s.io/client-go/rest"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/internal/widget"
	"github.com/generic-informers/generic/typed"
)

// TestUnstructuredForSharesLabelsButNotWithATransform reaches
// UnstructuredFor's decoder through an httptest server serving the Pods of
// testdata/pods.yaml, three of which have the labels app=web: without a
// transform their cached objects share one labels map; a transform that
// deletes the label of one of them in place (generic.WithTransform) leaves
// the others' labels as the server sent them.
func TestUnstructuredForSharesLabelsButNotWithATransform(t *testing.T) {
	clientfeaturestesting.SetFeatureDuringTest(t, clientfeatures.WatchListClient, false)
	dropWebZerosApp := func(obj any) (any, error) {
		u := obj.(*unstructured.Unstructured)
		if u.GetNamespace() == "team-a" && u.GetName() == "web-0" {
			delete(u.Object["metadata"].(map[string]any)["labels"].(map[string]any), "app")
		}
		return u, nil
	}
	tests := []struct {
		name       string
		opts       []generic.InformerOption
		wantApps   map[string]string
		wantShared bool
	}{
		{
			name:       "no transform: equal labels are one map",
			wantApps:   map[string]string{"team-a/web-0": "web", "team-a/web-1": "web", "team-a/db-0": "db", "team-b/web-0": "web"},
			wantShared: true,
		},
		{
			name:     "a transform edits the labels of one object only",
			opts:     []generic.InformerOption{generic.WithTransform(dropWebZerosApp)},
			wantApps: map[string]string{"team-a/web-0": "", "team-a/web-1": "web", "team-a/db-0": "db", "team-b/web-0": "web"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			scheme := widget.NewScheme()
			httpServer := podsServer(t, scheme)
			defer httpServer.Close()
			factory, err := typed.NewFactoryForClients(typed.Clients{Config: &rest.Config{Host: httpServer.URL}, RESTMapper: newMapper()}, scheme)
			check(t, err)
			defer factory.Shutdown()
			pods, err := typed.UnstructuredFor(factory, corev1.SchemeGroupVersion.WithResource("pods"), tc.opts...)
			check(t, err)
			startAndSync(t, factory)

			cached, err := pods.Lister().List(labels.Everything())
			check(t, err)
			gotApps := map[string]string{}
			labelMaps := map[uintptr]int{}
			for _, u := range cached {
				gotApps[u.GetNamespace()+"/"+u.GetName()] = u.GetLabels()["app"]
				if labelMap, ok := u.Object["metadata"].(map[string]any)["labels"].(map[string]any); ok && u.GetLabels()["app"] == "web" {
					labelMaps[reflect.ValueOf(labelMap).Pointer()]++
				}
			}
			if diff := cmp.Diff(tc.wantApps, gotApps); diff != "" {
				t.Errorf("app labels (-want +got):\n%s", diff)
			}
			if gotShared := len(labelMaps) == 1 && len(cached) > 1; gotShared != tc.wantShared {
				t.Errorf("the app=web Pods share one labels map: %v, want %v (%d maps)", gotShared, tc.wantShared, len(labelMaps))
			}
		})
	}
}
