package controller_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/generic-informers/generic/controller"
)

func TestIgnoreNotFound(t *testing.T) {
	quotas := schema.GroupResource{Resource: "quotas"}
	tests := []struct {
		name string
		err  error
		want string // the error returned, "" for nil
	}{
		{name: "nil", err: nil, want: ""},
		{name: "NotFound", err: apierrors.NewNotFound(quotas, "q"), want: ""},
		{name: "another error", err: errors.New("boom"), want: "boom"},
		{name: "a Conflict", err: apierrors.NewConflict(quotas, "q", errors.New("stale")),
			want: `Operation cannot be fulfilled on quotas "q": stale`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := ""
			if err := controller.IgnoreNotFound(tc.err); err != nil {
				got = err.Error()
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("IgnoreNotFound (-want +got):\n%s", diff)
			}
		})
	}
}
