package typed

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	discoveryfake "k8s.io/client-go/discovery/fake"
	clienttesting "k8s.io/client-go/testing"
)

func TestDiscoveryKinds(t *testing.T) {
	disco := &discoveryfake.FakeDiscovery{Fake: &clienttesting.Fake{Resources: []*metav1.APIResourceList{{
		GroupVersion: "example.com/v1",
		APIResources: []metav1.APIResource{
			{Name: "widgets/status", Kind: "Widget", Namespaced: true},
			{Name: "widgets", Kind: "Widget", Namespaced: true},
			{Name: "gizmos", Kind: "Gizmo", Namespaced: false},
		},
	}}}}
	kinds := newDiscoveryKinds(disco)
	tests := []struct {
		name        string
		gvk         schema.GroupVersionKind
		wantGVR     schema.GroupVersionResource
		wantScope   meta.RESTScopeName
		wantNoMatch bool
		wantErr     bool
	}{
		{name: "namespaced, subresource skipped", gvk: schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"},
			wantGVR: schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}, wantScope: meta.RESTScopeNameNamespace},
		{name: "cluster-scoped", gvk: schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Gizmo"},
			wantGVR: schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "gizmos"}, wantScope: meta.RESTScopeNameRoot},
		{name: "kind not served in its group version", gvk: schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Sprocket"}, wantNoMatch: true},
		{name: "group version not served", gvk: schema.GroupVersionKind{Group: "nowhere.example", Version: "v1", Kind: "Thing"}, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			mapping, err := kinds.mappingFor(tc.gvk)
			switch {
			case tc.wantNoMatch:
				if !meta.IsNoMatchError(err) {
					t.Fatalf("error = %v, want a NoKindMatchError", err)
				}
				return
			case tc.wantErr:
				if err == nil {
					t.Fatal("no error")
				}
				return
			case err != nil:
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantGVR, mapping.Resource); diff != "" {
				t.Errorf("resource (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantScope, mapping.Scope.Name()); diff != "" {
				t.Errorf("scope (-want +got):\n%s", diff)
			}
		})
	}
	// A found mapping is kept: asked again, discovery is not called.
	calls := len(disco.Actions())
	if calls == 0 {
		t.Fatal("the fake discovery recorded no call")
	}
	if _, err := kinds.mappingFor(schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(calls, len(disco.Actions())); diff != "" {
		t.Errorf("discovery calls (-want +got):\n%s", diff)
	}
}
