package typed_test

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"github.com/generic-informers/generic/generictest"
	"github.com/generic-informers/generic/internal/widget"
	"github.com/generic-informers/generic/internal/writes"
	"github.com/generic-informers/generic/typed"
)

// recorded collects the writes a client reports.
type recorded struct {
	mu     sync.Mutex
	writes []string
}

func (r *recorded) Record(w writes.Write) {
	r.mu.Lock()
	defer r.mu.Unlock()
	verb := "wrote"
	if w.Deleted {
		verb = "deleted"
	}
	r.writes = append(r.writes, verb+" "+w.Resource.Resource+" "+w.Namespace+"/"+w.Name)
}

// TestClient: each method of a Client of a custom resource, against the
// Fake's REST front, what it answers and which writes it records.
func TestClient(t *testing.T) {
	small := cache.ObjectName{Namespace: "team-a", Name: "small"}
	tests := []struct {
		name string
		do   func(ctx context.Context, c *typed.Client[*widget.Widget]) (string, error)
		// want is what do returns: a summary of the answer.
		want        string
		wantErr     func(error) bool
		wantRecords []string
	}{{
		name: "Get",
		do: func(ctx context.Context, c *typed.Client[*widget.Widget]) (string, error) {
			w, err := c.Get(ctx, small, metav1.GetOptions{})
			return w.Spec.Color, err
		},
		want: "blue",
	}, {
		name: "Get of a missing object is NotFound",
		do: func(ctx context.Context, c *typed.Client[*widget.Widget]) (string, error) {
			_, err := c.Get(ctx, cache.ObjectName{Namespace: "team-a", Name: "none"}, metav1.GetOptions{})
			return "", err
		},
		wantErr: apierrors.IsNotFound,
	}, {
		name: "List of a namespace",
		do: func(ctx context.Context, c *typed.Client[*widget.Widget]) (string, error) {
			ws, err := c.List(ctx, "team-a", metav1.ListOptions{LabelSelector: "size=large"})
			names := ""
			for _, w := range ws {
				names += w.Name
			}
			return names, err
		},
		want: "large",
	}, {
		name: "Create",
		do: func(ctx context.Context, c *typed.Client[*widget.Widget]) (string, error) {
			w, err := c.Create(ctx, &widget.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "new"}, Spec: widget.Spec{Size: 4}}, metav1.CreateOptions{})
			return w.Name, err
		},
		want:        "new",
		wantRecords: []string{"wrote widgets team-a/new"},
	}, {
		name: "Update of a stale object is a Conflict, and records nothing",
		do: func(ctx context.Context, c *typed.Client[*widget.Widget]) (string, error) {
			w, err := c.Get(ctx, small, metav1.GetOptions{})
			if err != nil {
				return "", err
			}
			w.ResourceVersion = "1"
			_, err = c.Update(ctx, w, metav1.UpdateOptions{})
			return "", err
		},
		wantErr: apierrors.IsConflict,
	}, {
		name: "Update of the spec bumps the generation",
		do: func(ctx context.Context, c *typed.Client[*widget.Widget]) (string, error) {
			w, err := c.Get(ctx, small, metav1.GetOptions{})
			if err != nil {
				return "", err
			}
			w.Spec.Size = 9
			w, err = c.Update(ctx, w, metav1.UpdateOptions{})
			return generation(w), err
		},
		want:        "2",
		wantRecords: []string{"wrote widgets team-a/small"},
	}, {
		name: "UpdateStatus writes the status only",
		do: func(ctx context.Context, c *typed.Client[*widget.Widget]) (string, error) {
			w, err := c.Get(ctx, small, metav1.GetOptions{})
			if err != nil {
				return "", err
			}
			w.Status.Ready = true
			w.Spec.Color = "ignored"
			w, err = c.UpdateStatus(ctx, w, metav1.UpdateOptions{})
			if w == nil {
				return "", err
			}
			return w.Spec.Color + " " + generation(w), err
		},
		want:        "blue 1",
		wantRecords: []string{"wrote widgets team-a/small"},
	}, {
		name: "Patch",
		do: func(ctx context.Context, c *typed.Client[*widget.Widget]) (string, error) {
			w, err := c.Patch(ctx, small, types.MergePatchType, []byte(`{"spec":{"color":"teal"}}`), metav1.PatchOptions{})
			return w.Spec.Color, err
		},
		want:        "teal",
		wantRecords: []string{"wrote widgets team-a/small"},
	}, {
		name: "Apply",
		do: func(ctx context.Context, c *typed.Client[*widget.Widget]) (string, error) {
			w, err := c.Apply(ctx, &widget.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "applied"}, Spec: widget.Spec{Color: "gold"}},
				metav1.ApplyOptions{FieldManager: "test"})
			return w.Spec.Color, err
		},
		want:        "gold",
		wantRecords: []string{"wrote widgets team-a/applied"},
	}, {
		name: "Delete",
		do: func(ctx context.Context, c *typed.Client[*widget.Widget]) (string, error) {
			return "", c.Delete(ctx, small, metav1.DeleteOptions{})
		},
		wantRecords: []string{"deleted widgets team-a/small"},
	}, {
		name: "a nil object is an error, not a panic",
		do: func(ctx context.Context, c *typed.Client[*widget.Widget]) (string, error) {
			_, err := c.Create(ctx, nil, metav1.CreateOptions{})
			return "", err
		},
		wantErr: func(err error) bool { return err != nil && err.Error() == "typed: Create of a nil *widget.Widget" },
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fake := generictest.New(t, widget.NewScheme(), generictest.Files(
				filepath.Join("..", "testdata", "crds", "widgets.example.com.yaml"), filepath.Join("..", "testdata", "widgets.yaml")))
			client, err := typed.ClientFor[*widget.Widget](fake.Factory())
			if err != nil {
				t.Fatal(err)
			}
			rec := &recorded{}
			got, err := tc.do(writes.WithRecorder(context.Background(), rec), client)
			switch {
			case tc.wantErr != nil && !tc.wantErr(err):
				t.Errorf("error %v: not the one expected", err)
			case tc.wantErr == nil && err != nil:
				t.Errorf("error: %v", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("answer (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantRecords, rec.writes); diff != "" {
				t.Errorf("recorded writes (-want +got):\n%s", diff)
			}
		})
	}
}

func generation(w *widget.Widget) string {
	if w == nil {
		return ""
	}
	return string(rune('0' + w.Generation))
}

// TestClientForErrors: a Client that cannot be made is an error.
func TestClientForErrors(t *testing.T) {
	fake := generictest.New(t, widget.NewScheme())
	noConfig, err := typed.NewFactoryForClients(typed.Clients{Dynamic: fake.Dynamic(), RESTMapper: fake.RESTMapper()}, widget.NewScheme())
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		make func() error
		want string
	}{
		{name: "nil factory", make: func() error { _, err := typed.ClientFor[*corev1.Pod](nil); return err }, want: "typed: nil Factory"},
		{name: "no Config", make: func() error { _, err := typed.ClientFor[*corev1.Pod](noConfig); return err },
			want: "typed: ClientFor needs Clients.Config; this factory has none"},
		{name: "a type not in the scheme", make: func() error { _, err := typed.ClientFor[*unregistered](fake.Factory()); return err },
			want: "typed: *typed_test.unregistered is not registered in the scheme"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.make()
			if err == nil {
				err = errors.New("")
			}
			if diff := cmp.Diff(tc.want, err.Error()); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
		})
	}
}

// unregistered is a type no scheme knows.
type unregistered struct{ corev1.ConfigMap }
