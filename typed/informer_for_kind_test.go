package typed_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/internal/widget"
	"github.com/generic-informers/generic/typed"
)

// TestInformerForKind serves kinds chosen at run time: every object is of
// its kind's Go type, and the same kind gets the same informer.
func TestInformerForKind(t *testing.T) {
	factory := newFactory(t)
	tests := []struct {
		gvk      schema.GroupVersionKind
		wantKeys []string
		wantType string
	}{
		{gvk: corev1.SchemeGroupVersion.WithKind("Pod"), wantKeys: []string{"team-a/db-0", "team-a/web-0", "team-a/web-1", "team-b/web-0"}, wantType: "*v1.Pod"},
		{gvk: corev1.SchemeGroupVersion.WithKind("Namespace"), wantKeys: []string{"kube-system", "team-a", "team-b"}, wantType: "*v1.Namespace"},
		{gvk: widget.GVK, wantKeys: []string{"team-a/large", "team-a/small", "team-b/small"}, wantType: "*widget.Widget"},
	}
	informers := make([]typedInformer, len(tests))
	for i, tc := range tests {
		informer, err := typed.InformerForKind(factory, tc.gvk)
		check(t, err)
		again, err := typed.InformerForKind(factory, tc.gvk)
		check(t, err)
		if again.Informer() != informer.Informer() {
			t.Errorf("%v: a second call returned another informer", tc.gvk)
		}
		informers[i] = informer
	}
	startAndSync(t, factory)
	for i, tc := range tests {
		t.Run(tc.gvk.Kind, func(t *testing.T) {
			objs, err := informers[i].Lister().List(labels.Everything())
			check(t, err)
			types := map[string]bool{}
			for _, obj := range objs {
				types[fmt.Sprintf("%T", obj)] = true
			}
			if diff := cmp.Diff(tc.wantKeys, names(objs)); diff != "" {
				t.Errorf("keys (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(map[string]bool{tc.wantType: true}, types); diff != "" {
				t.Errorf("Go types (-want +got):\n%s", diff)
			}
		})
	}
}

type typedInformer = generic.Informer[typed.Object]

func TestInformerForKindBadInput(t *testing.T) {
	factory := newFactory(t)
	tests := []struct {
		name    string
		factory *typed.Factory
		gvk     schema.GroupVersionKind
		wantErr string
	}{
		{name: "nil factory", gvk: widget.GVK, wantErr: "typed: nil Factory"},
		{name: "kind not in the scheme", factory: factory, gvk: schema.GroupVersionKind{Group: "nowhere.example", Version: "v1", Kind: "Thing"}, wantErr: "no kind \"Thing\" is registered"},
		// A kind the RESTMapper does not know is not an error: its
		// informer is NotServed until it does (TestInformerForBeforeTheCRD).
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := typed.InformerForKind(tc.factory, tc.gvk)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error = %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}
