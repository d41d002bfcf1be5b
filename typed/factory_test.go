package typed_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/internal/fixtures"
	"github.com/generic-informers/generic/internal/widget"
	"github.com/generic-informers/generic/typed"
)

var (
	podsGVR       = corev1.SchemeGroupVersion.WithResource("pods")
	namespacesGVR = corev1.SchemeGroupVersion.WithResource("namespaces")
)

func newMapper() meta.RESTMapper {
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(corev1.SchemeGroupVersion.WithKind("Pod"), meta.RESTScopeNamespace)
	mapper.Add(corev1.SchemeGroupVersion.WithKind("Namespace"), meta.RESTScopeRoot)
	mapper.Add(widget.GVK, meta.RESTScopeNamespace)
	return mapper
}

// newFactory returns a typed Factory fed by client-go's fake dynamic client
// seeded from the fixtures, with a RESTMapper that knows Pods, Namespaces and
// Widgets.
func newFactory(t *testing.T, opts ...generic.FactoryOption) *typed.Factory {
	t.Helper()
	objs, err := fixtures.Load("../testdata/pods.yaml", "../testdata/namespaces.yaml", "../testdata/widgets.yaml")
	if err != nil {
		t.Fatal(err)
	}
	seed := make([]runtime.Object, len(objs))
	for i := range objs {
		seed[i] = objs[i]
	}
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
		podsGVR: "PodList", namespacesGVR: "NamespaceList", widget.GVR: "WidgetList",
	}, seed...)
	factory, err := typed.NewFactoryForClients(typed.Clients{Dynamic: client, RESTMapper: newMapper()}, widget.NewScheme(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(factory.Shutdown)
	return factory
}

func mustInformer[T generic.Object](t *testing.T, factory *typed.Factory, opts ...generic.InformerOption) generic.Informer[T] {
	t.Helper()
	informer, err := typed.InformerFor[T](factory, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return informer
}

func startAndSync(t *testing.T, factory *typed.Factory) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	factory.Start(context.Background())
	if err := factory.WaitForCacheSync(ctx).AsError(); err != nil {
		t.Fatal(err)
	}
}

func names[T metav1.Object](objs []T) []string {
	ret := make([]string, 0, len(objs))
	for _, obj := range objs {
		key, _ := cache.MetaNamespaceKeyFunc(obj)
		ret = append(ret, key)
	}
	slices.Sort(ret)
	return ret
}

// TestInformerForServesGoTypes reads built-in and CRD Go types from one
// factory, with no casts, and with the factory's namespace applied to
// namespaced resources only.
func TestInformerForServesGoTypes(t *testing.T) {
	tests := []struct {
		name      string
		namespace string
		want      map[string][]string
	}{{
		name: "all namespaces",
		want: map[string][]string{
			"pods":       {"team-a/db-0", "team-a/web-0", "team-a/web-1", "team-b/web-0"},
			"namespaces": {"kube-system", "team-a", "team-b"},
			"widgets":    {"team-a/large", "team-a/small", "team-b/small"},
		},
	}, {
		name:      "one namespace; cluster-scoped resources ignore it",
		namespace: "team-b",
		want: map[string][]string{
			"pods":       {"team-b/web-0"},
			"namespaces": {"kube-system", "team-a", "team-b"},
			"widgets":    {"team-b/small"},
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			factory := newFactory(t, generic.WithNamespace(tc.namespace))
			pods := mustInformer[*corev1.Pod](t, factory)
			namespaces := mustInformer[*corev1.Namespace](t, factory)
			widgets := mustInformer[*widget.Widget](t, factory)
			startAndSync(t, factory)

			got := map[string][]string{}
			podList, err := pods.Lister().List(labels.Everything())
			check(t, err)
			got["pods"] = names(podList)
			namespaceList, err := namespaces.Lister().List(labels.Everything())
			check(t, err)
			got["namespaces"] = names(namespaceList)
			widgetList, err := widgets.Lister().List(labels.Everything())
			check(t, err)
			got["widgets"] = names(widgetList)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("cached (-want +got):\n%s", diff)
			}
		})
	}
}

func TestInformerForTypedReads(t *testing.T) {
	factory := newFactory(t)
	widgets := mustInformer[*widget.Widget](t, factory)
	pods := mustInformer[*corev1.Pod](t, factory)
	startAndSync(t, factory)

	small, err := widgets.Lister().Namespace("team-a").Get("small")
	check(t, err)
	if diff := cmp.Diff(widget.Spec{Size: 1, Color: "blue", ConfigMapName: "settings"}, small.Spec); diff != "" {
		t.Errorf("Widget spec (-want +got):\n%s", diff)
	}
	db, err := pods.Lister().Namespace("team-a").Get("db-0")
	check(t, err)
	if diff := cmp.Diff("postgres:17", db.Spec.Containers[0].Image); diff != "" {
		t.Errorf("Pod image (-want +got):\n%s", diff)
	}
	// Each call is a Handle of its own, on one shared informer.
	if again := mustInformer[*widget.Widget](t, factory); again.Informer() != widgets.Informer() {
		t.Error("InformerFor of the same type returned another informer")
	}
}

func newFactoryClient(t *testing.T) *dynamicfake.FakeDynamicClient {
	objs, err := fixtures.Load("../testdata/widgets.yaml")
	check(t, err)
	seed := make([]runtime.Object, len(objs))
	for i := range objs {
		seed[i] = objs[i]
	}
	return dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{widget.GVR: "WidgetList"}, seed...)
}

// listlessScheme registers Widget without WidgetList.
func listlessScheme() *runtime.Scheme {
	scheme := runtime.NewScheme()
	scheme.AddKnownTypes(widget.SchemeGroupVersion, &widget.Widget{})
	return scheme
}

func TestBadInput(t *testing.T) {
	client := newFactoryClient(t)
	tests := []struct {
		name    string
		wantErr string // a part of the error message
		try     func() error
	}{
		{name: "nil rest.Config", wantErr: "typed: nil rest.Config", try: func() error {
			_, err := typed.NewFactory(nil, widget.NewScheme())
			return err
		}},
		{name: "nil scheme", wantErr: "typed: nil scheme", try: func() error {
			_, err := typed.NewFactory(&rest.Config{Host: "http://127.0.0.1:1"}, nil)
			return err
		}},
		{name: "no clients", wantErr: "needs a rest.Config or a dynamic client", try: func() error {
			_, err := typed.NewFactoryForClients(typed.Clients{}, widget.NewScheme())
			return err
		}},
		{name: "nil factory", wantErr: "typed: nil Factory", try: func() error {
			_, err := typed.InformerFor[*corev1.Pod](nil)
			return err
		}},
		{name: "type not in the scheme", wantErr: "*v1.Deployment is not registered in the scheme", try: func() error {
			factory, err := typed.NewFactoryForClients(typed.Clients{Dynamic: client, RESTMapper: newMapper()}, listlessScheme())
			check(t, err)
			_, err = typed.InformerFor[*appsv1.Deployment](factory)
			return err
		}},
		{name: "type whose list kind is not in the scheme", wantErr: "its list kind example.com/v1, Kind=WidgetList is not", try: func() error {
			factory, err := typed.NewFactoryForClients(typed.Clients{Dynamic: client, RESTMapper: newMapper()}, listlessScheme())
			check(t, err)
			_, err = typed.InformerFor[*widget.Widget](factory)
			return err
		}},
		// A kind the RESTMapper does not know is not an error: its
		// informer is NotServed until it does (TestInformerForBeforeTheCRD).
		{name: "no RESTMapper", wantErr: "set Clients.RESTMapper or Clients.Config", try: func() error {
			factory, err := typed.NewFactoryForClients(typed.Clients{Dynamic: client}, widget.NewScheme())
			check(t, err)
			_, err = typed.InformerFor[*widget.Widget](factory)
			return err
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.try()
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error = %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

func check(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// brokenMapper answers every RESTMapping with mapping and no error.
type brokenMapper struct {
	meta.RESTMapper
	mapping *meta.RESTMapping
}

func (m brokenMapper) RESTMapping(schema.GroupKind, ...string) (*meta.RESTMapping, error) {
	return m.mapping, nil
}

// TestBrokenRESTMapper: a RESTMapper that answers with no mapping, or one
// with no scope, and no error makes InformerFor fail with an error and
// Release return false; neither panics.
func TestBrokenRESTMapper(t *testing.T) {
	tests := []struct {
		name    string
		mapping *meta.RESTMapping
	}{
		{"no mapping", nil},
		{"no scope", &meta.RESTMapping{Resource: podsGVR, GroupVersionKind: corev1.SchemeGroupVersion.WithKind("Pod")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{podsGVR: "PodList"})
			factory, err := typed.NewFactoryForClients(typed.Clients{Dynamic: client, RESTMapper: brokenMapper{mapping: tc.mapping}}, widget.NewScheme())
			if err != nil {
				t.Fatal(err)
			}
			defer factory.Shutdown()
			if _, err := typed.InformerFor[*corev1.Pod](factory); err == nil || !strings.Contains(err.Error(), "no resource or no scope") {
				t.Errorf("InformerFor error = %v, want one saying the RESTMapper gave no resource or scope", err)
			}
		})
	}
}

// TestFactoryScheme: code that holds only a factory reaches the scheme
// it was made with, to tell a type's GroupVersionKind and make objects.
func TestFactoryScheme(t *testing.T) {
	scheme := widget.NewScheme()
	factory, err := typed.NewFactoryForClients(typed.Clients{Dynamic: dynamicfake.NewSimpleDynamicClient(scheme)}, scheme)
	check(t, err)
	defer factory.Shutdown()
	if factory.Scheme() != scheme {
		t.Fatal("Scheme is not the factory's scheme")
	}
	kinds, _, err := factory.Scheme().ObjectKinds(&widget.Widget{})
	check(t, err)
	if diff := cmp.Diff([]schema.GroupVersionKind{widget.GVK}, kinds); diff != "" {
		t.Errorf("the Widget's kinds (-want +got):\n%s", diff)
	}
}
