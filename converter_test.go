package generic_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/internal/widget"
)

func TestFromUnstructured(t *testing.T) {
	good := load(t, "testdata/widgets.yaml")[0]
	broken := load(t, "testdata/malformed/widget-wrong-type.yaml")[0]
	typedWidget := &widget.Widget{
		TypeMeta:   metav1.TypeMeta{APIVersion: "example.com/v1", Kind: "Widget"},
		ObjectMeta: metav1.ObjectMeta{Name: "small", Namespace: "team-a", Labels: map[string]string{"size": "small"}},
		Spec:       widget.Spec{Size: 1, Color: "blue", ConfigMapName: "settings"},
	}
	convert := generic.FromUnstructured[*widget.Widget]()

	tests := []struct {
		name    string
		in      runtime.Object
		want    *widget.Widget
		wantErr error
	}{
		{name: "unstructured Widget", in: good, want: typedWidget},
		{name: "already a Widget passes through", in: typedWidget, want: typedWidget},
		{name: "spec field of the wrong type", in: broken, wantErr: errAny},
		{name: "typed object of another type", in: &corev1.Pod{}, wantErr: generic.ErrUnexpectedType},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := convert(tc.in)
			if !matches(err, tc.wantErr) {
				t.Fatalf("error = %v, want %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("converted (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFromUnstructuredNonPointerType(t *testing.T) {
	// An interface type cannot be allocated: every call is an error, not a panic.
	convert := generic.FromUnstructured[runtime.Object]()
	if _, err := convert(load(t, "testdata/widgets.yaml")[0]); !errors.Is(err, generic.ErrUnexpectedType) {
		t.Errorf("error = %v, want one wrapping ErrUnexpectedType", err)
	}
}

func TestIdentity(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}}
	tests := []struct {
		name    string
		in      runtime.Object
		want    *corev1.Pod
		wantErr error
		wantMsg string
	}{
		{name: "same type", in: pod, want: pod},
		{
			name:    "other type names both types",
			in:      &corev1.ConfigMap{},
			wantErr: generic.ErrUnexpectedType,
			wantMsg: "unexpected object type: got *v1.ConfigMap, want *v1.Pod",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := generic.Identity[*corev1.Pod]()(tc.in)
			if !matches(err, tc.wantErr) {
				t.Fatalf("error = %v, want %v", err, tc.wantErr)
			}
			if err != nil {
				if diff := cmp.Diff(tc.wantMsg, err.Error()); diff != "" {
					t.Errorf("message (-want +got):\n%s", diff)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("converted (-want +got):\n%s", diff)
			}
		})
	}
}

// errAny stands for "some error" in tables.
var errAny = errors.New("any error")

// matches reports whether err is what a table wants: nil for nil, any error
// for errAny, else an error wrapping want.
func matches(err, want error) bool {
	switch want {
	case nil:
		return err == nil
	case errAny:
		return err != nil
	}
	return errors.Is(err, want)
}
