package typed_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"

	"github.com/generic-informers/generic/internal/widget"
	"github.com/generic-informers/generic/typed"
)

// TestEmptyOrVersionlessResourceRefused: the typed constructors refuse a
// resource or kind without a version (or without a resource or kind, the
// empty one among them) with an error naming it, and make nothing; they
// made an informer whose requests could never succeed.
func TestEmptyOrVersionlessResourceRefused(t *testing.T) {
	versionless := schema.GroupVersionResource{Group: "apps", Resource: "deployments"}
	tests := []struct {
		name    string
		wantErr string // a part of the error message
		try     func(*typed.Factory) error
	}{
		{name: "UnstructuredFor, the empty resource", wantErr: `schema.GroupVersionResource{Group:"", Version:"", Resource:""}`,
			try: func(f *typed.Factory) error {
				_, err := typed.UnstructuredFor(f, schema.GroupVersionResource{})
				return err
			}},
		{name: "UnstructuredFor, no version", wantErr: `schema.GroupVersionResource{Group:"apps", Version:"", Resource:"deployments"}`,
			try: func(f *typed.Factory) error {
				_, err := typed.UnstructuredFor(f, versionless)
				return err
			}},
		{name: "MetadataFor, the empty resource", wantErr: `schema.GroupVersionResource{Group:"", Version:"", Resource:""}`,
			try: func(f *typed.Factory) error {
				_, err := typed.MetadataFor(f, schema.GroupVersionResource{})
				return err
			}},
		{name: "MetadataFor, no resource", wantErr: `schema.GroupVersionResource{Group:"", Version:"v1", Resource:""}`,
			try: func(f *typed.Factory) error {
				_, err := typed.MetadataFor(f, schema.GroupVersionResource{Version: "v1"})
				return err
			}},
		{name: "InformerForKind, the empty kind", wantErr: `schema.GroupVersionKind{Group:"", Version:"", Kind:""}`,
			try: func(f *typed.Factory) error {
				_, err := typed.InformerForKind(f, schema.GroupVersionKind{})
				return err
			}},
		{name: "InformerForKind, no version", wantErr: `schema.GroupVersionKind{Group:"example.com", Version:"", Kind:"Widget"}`,
			try: func(f *typed.Factory) error {
				_, err := typed.InformerForKind(f, schema.GroupVersionKind{Group: "example.com", Kind: "Widget"})
				return err
			}},
		{name: "InformerFor, a RESTMapper that gives no version", wantErr: `schema.GroupVersionResource{Group:"", Version:"", Resource:"pods"}`,
			try: func(*typed.Factory) error {
				mapper := brokenMapper{mapping: &meta.RESTMapping{Resource: schema.GroupVersionResource{Resource: "pods"},
					GroupVersionKind: corev1.SchemeGroupVersion.WithKind("Pod"), Scope: meta.RESTScopeNamespace}}
				client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{podsGVR: "PodList"})
				f, err := typed.NewFactoryForClients(typed.Clients{Dynamic: client, RESTMapper: mapper}, widget.NewScheme())
				check(t, err)
				defer f.Shutdown()
				_, err = typed.InformerFor[*corev1.Pod](f)
				return err
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			factory := newFactory(t)
			err := tc.try(factory)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error = %v, want one naming %s", err, tc.wantErr)
			}
			if diff := cmp.Diff(0, len(factory.Statuses())); diff != "" {
				t.Errorf("informers made (-want +got):\n%s", diff)
			}
		})
	}
}
