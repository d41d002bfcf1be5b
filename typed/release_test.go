package typed_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/internal/widget"
	"github.com/generic-informers/generic/typed"
)

func TestRelease(t *testing.T) {
	factory := newFactory(t)
	widgets := mustInformer[*widget.Widget](t, factory)
	mustInformer[*widget.Widget](t, factory)
	pods, err := typed.InformerForKind(factory, corev1.SchemeGroupVersion.WithKind("Pod"))
	check(t, err)
	startAndSync(t, factory)

	steps := []struct {
		name string
		do   func() bool
		want bool
	}{
		{name: "a type never asked for", do: func() bool { return typed.Release[*corev1.Namespace](factory) }},
		{name: "a type not in the scheme", do: func() bool { return typed.Release[*appsv1.Deployment](factory) }},
		{name: "first of two Widget holders", do: func() bool { return typed.Release[*widget.Widget](factory) }},
		{name: "last Widget holder", do: func() bool { return typed.Release[*widget.Widget](factory) }, want: true},
		{name: "the Pod kind", do: func() bool { return typed.ReleaseKind(factory, corev1.SchemeGroupVersion.WithKind("Pod")) }, want: true},
		{name: "nil factory", do: func() bool { return typed.Release[*widget.Widget](nil) }},
	}
	for _, step := range steps {
		if diff := cmp.Diff(step.want, step.do()); diff != "" {
			t.Errorf("%s: Release (-want +got):\n%s", step.name, diff)
		}
	}
	for name, informer := range map[string]interface{ Status() generic.Status }{"widgets": widgets, "pods": pods} {
		// Release does not wait: the informer stops soon after.
		_ = wait.PollUntilContextTimeout(context.Background(), time.Millisecond, 10*time.Second, true,
			func(context.Context) (bool, error) { return informer.Status().State == generic.Stopped, nil })
		if diff := cmp.Diff(generic.Stopped, informer.Status().State); diff != "" {
			t.Errorf("%s: state after release (-want +got):\n%s", name, diff)
		}
	}
	if diff := cmp.Diff(0, len(factory.Statuses())); diff != "" {
		t.Errorf("informers left (-want +got):\n%s", diff)
	}
	if fresh := mustInformer[*widget.Widget](t, factory); fresh == widgets {
		t.Error("InformerFor after release returned the stopped informer")
	}
}
