package generictest_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/generic-informers/generic/generictest"
	"github.com/generic-informers/generic/internal/widget"
	"github.com/generic-informers/generic/typed"
)

// TestFactory: the Fake's factory is the one its informers come from, it
// makes write clients (typed.ClientFor) whose requests the REST front
// serves, and giving it a rest.Config changes neither how its informers
// are fed nor that it makes no discovery request.
func TestFactory(t *testing.T) {
	tests := []struct {
		name string
		use  func(ctx context.Context, f *generictest.Fake) (any, error)
		want any
	}{{
		name: "its informers are the Fake's",
		use: func(_ context.Context, f *generictest.Fake) (any, error) {
			fakes := generictest.NewInformer[*corev1.ConfigMap](f)
			handle, err := typed.InformerFor[*corev1.ConfigMap](f.Factory())
			if err != nil {
				return nil, err
			}
			defer handle.Release()
			return handle.Informer() == fakes.Informer(), nil
		},
		want: true,
	}, {
		name: "informers of every kind make no request to the REST front",
		use: func(_ context.Context, f *generictest.Fake) (any, error) {
			generictest.NewInformer[*widget.Widget](f)
			generictest.NewUnstructuredInformer(f, configMapsGVR)
			generictest.NewMetadataInformer(f, configMapsGVR)
			return generictest.RESTRequests(f), nil
		},
		want: []string(nil),
	}, {
		name: "a typed client makes only its own requests, no discovery",
		use: func(ctx context.Context, f *generictest.Fake) (any, error) {
			configMaps, err := typed.ClientFor[*corev1.ConfigMap](f.Factory())
			if err != nil {
				return nil, err
			}
			if _, err := configMaps.Get(ctx, cache.ObjectName{Namespace: "team-a", Name: "settings"}, metav1.GetOptions{}); err != nil {
				return nil, err
			}
			widgets, err := typed.ClientFor[*widget.Widget](f.Factory())
			if err != nil {
				return nil, err
			}
			if _, err := widgets.List(ctx, "team-a", metav1.ListOptions{}); err != nil {
				return nil, err
			}
			return generictest.RESTRequests(f), nil
		},
		want: []string{"GET /api/v1/namespaces/team-a/configmaps/settings", "GET /apis/example.com/v1/namespaces/team-a/widgets"},
	}, {
		name: "a typed client's writes reach the Fake's informers",
		use: func(ctx context.Context, f *generictest.Fake) (any, error) {
			informer := generictest.NewInformer[*widget.Widget](f)
			rec := generictest.NewRecorder[*widget.Widget]()
			if _, err := informer.AddEventHandler(rec); err != nil {
				return nil, err
			}
			rec.Reset()
			widgets, err := typed.ClientFor[*widget.Widget](f.Factory())
			if err != nil {
				return nil, err
			}
			w, err := widgets.Get(ctx, cache.ObjectName{Namespace: "team-a", Name: "small"}, metav1.GetOptions{})
			if err != nil {
				return nil, err
			}
			w.Status.Ready = true
			updated, err := widgets.UpdateStatus(ctx, w, metav1.UpdateOptions{})
			if err != nil {
				return nil, err
			}
			if err := informer.WaitForWrite(ctx, updated); err != nil {
				return nil, err
			}
			cached, err := informer.Lister().Namespace("team-a").Get("small")
			if err != nil {
				return nil, err
			}
			f.Settle()
			return []any{fmt.Sprintf("ready=%t", cached.Status.Ready), rec.Events()}, nil
		},
		want: []any{"ready=true", []generictest.Event{{Verb: generictest.Modified, Key: "team-a/small"}}},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fake := generictest.New(t, widget.NewScheme(), generictest.Files(
				"../testdata/configmaps.yaml", "../testdata/crds/widgets.example.com.yaml", "../testdata/widgets.yaml"))
			got, err := tc.use(context.Background(), fake)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got, generictest.IgnoreResourceVersion()); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
