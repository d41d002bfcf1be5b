package typed_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	dynamicfake "k8s.io/client-go/dynamic/fake"
	metadatafake "k8s.io/client-go/metadata/fake"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/internal/fixtures"
	"github.com/generic-informers/generic/internal/widget"
	"github.com/generic-informers/generic/typed"
)

// Gizmos are cluster-scoped, and served here under a plural that is not
// the one guessed from their kind ("gizmos"), as a CRD may name it.
var (
	gizmoGVK = schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Gizmo"}
	gizmoGVR = schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "gizmoz"}
)

// laterMapper is a RESTMapper that knows Widgets and Gizmos only once
// their CRDs are installed (install): until then it answers for them as
// a discovery RESTMapper does for a kind the server does not serve.
type laterMapper struct {
	meta.RESTMapper
	installed atomic.Bool
}

func newLaterMapper() *laterMapper {
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.AddSpecific(widget.GVK, widget.GVR, widget.GVR.GroupVersion().WithResource("widget"), meta.RESTScopeNamespace)
	mapper.AddSpecific(gizmoGVK, gizmoGVR, gizmoGVR.GroupVersion().WithResource("gizmo"), meta.RESTScopeRoot)
	return &laterMapper{RESTMapper: mapper}
}

func (m *laterMapper) install() { m.installed.Store(true) }

func (m *laterMapper) noMatch(group string) error {
	if m.installed.Load() || group != widget.GVK.Group {
		return nil
	}
	return &meta.NoResourceMatchError{PartialResource: schema.GroupVersionResource{Group: group}}
}

func (m *laterMapper) RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	if err := m.noMatch(gk.Group); err != nil {
		return nil, err
	}
	return m.RESTMapper.RESTMapping(gk, versions...)
}

func (m *laterMapper) RESTMappings(gk schema.GroupKind, versions ...string) ([]*meta.RESTMapping, error) {
	if err := m.noMatch(gk.Group); err != nil {
		return nil, err
	}
	return m.RESTMapper.RESTMappings(gk, versions...)
}

func (m *laterMapper) KindFor(resource schema.GroupVersionResource) (schema.GroupVersionKind, error) {
	if err := m.noMatch(resource.Group); err != nil {
		return schema.GroupVersionKind{}, err
	}
	return m.RESTMapper.KindFor(resource)
}

// newLaterFactory returns a typed Factory over client-go's fake dynamic and
// metadata clients, which hold the Widget and Gizmo fixtures (Gizmos under
// gizmoGVR), and a laterMapper: a cluster whose Widget and Gizmo CRDs are
// installed once the test says so.
func newLaterFactory(t *testing.T) (*typed.Factory, *laterMapper) {
	t.Helper()
	objs, err := fixtures.Load("../testdata/widgets.yaml", "../testdata/gizmos.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// The fake answers the plural guessed for Gizmos too (empty), where
	// a server answers 404: an informer that lists the guess syncs empty
	// rather than panic the fake.
	guessed := gizmoGVR.GroupVersion().WithResource("gizmos")
	dynamicClient := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{widget.GVR: "WidgetList", gizmoGVR: "GizmoList", guessed: "GizmoList"})
	metadataScheme := metadatafake.NewTestScheme()
	if err := metav1.AddMetaToScheme(metadataScheme); err != nil {
		t.Fatal(err)
	}
	metadataClient := metadatafake.NewSimpleMetadataClient(metadataScheme)
	for _, obj := range objs {
		gvr := widget.GVR
		if obj.GetKind() == gizmoGVK.Kind {
			gvr = gizmoGVR
		}
		check(t, dynamicClient.Tracker().Create(gvr, obj, obj.GetNamespace()))
		partial := &metav1.PartialObjectMetadata{
			TypeMeta:   metav1.TypeMeta{APIVersion: obj.GetAPIVersion(), Kind: obj.GetKind()},
			ObjectMeta: metav1.ObjectMeta{Namespace: obj.GetNamespace(), Name: obj.GetName(), Labels: obj.GetLabels()},
		}
		check(t, metadataClient.Tracker().Create(gvr, partial, obj.GetNamespace()))
	}
	scheme := widget.NewScheme()
	scheme.AddKnownTypeWithName(gizmoGVK, &widget.Widget{})
	scheme.AddKnownTypeWithName(gizmoGVK.GroupVersion().WithKind("GizmoList"), &widget.WidgetList{})
	mapper := newLaterMapper()
	factory, err := typed.NewFactoryForClients(typed.Clients{Dynamic: dynamicClient, Metadata: metadataClient, RESTMapper: mapper}, scheme)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(factory.Shutdown)
	return factory, mapper
}

// kindView is what the test reads of an informer of any view.
type kindView interface {
	Status() generic.Status
	Informer() cache.SharedIndexInformer
	GroupVersionResource() schema.GroupVersionResource
}

// TestKindViewsBeforeTheCRD: of a kind whose CRD is not installed yet,
// only InformerForKind handed out an informer that follows the kind once
// served; the unstructured and metadata-only informers of the resource
// guessed from the kind (what controller-runtime's cache backend asked
// for) kept listing that guess, which is not the resource when the CRD
// names another plural, and in the namespace asked for, where a
// cluster-scoped kind has no object. UnstructuredForKind and
// MetadataForKind, as InformerForKind, must hand out an informer that is
// NotServed until the kind is served, then lists the resource discovery
// gives at its scope, and syncs; later calls share it.
func TestKindViewsBeforeTheCRD(t *testing.T) {
	views := []struct {
		name    string
		acquire func(*typed.Factory, schema.GroupVersionKind, ...generic.InformerOption) (kindView, []string, error)
	}{
		{name: "typed", acquire: func(f *typed.Factory, gvk schema.GroupVersionKind, opts ...generic.InformerOption) (kindView, []string, error) {
			h, err := typed.InformerForKind(f, gvk, opts...)
			if err != nil {
				return nil, nil, err
			}
			objs, err := h.Lister().List(labels.Everything())
			return h, names(objs), err
		}},
		{name: "unstructured", acquire: func(f *typed.Factory, gvk schema.GroupVersionKind, opts ...generic.InformerOption) (kindView, []string, error) {
			h, err := typed.UnstructuredForKind(f, gvk, opts...)
			if err != nil {
				return nil, nil, err
			}
			objs, err := h.Lister().List(labels.Everything())
			return h, names(objs), err
		}},
		{name: "metadata", acquire: func(f *typed.Factory, gvk schema.GroupVersionKind, opts ...generic.InformerOption) (kindView, []string, error) {
			h, err := typed.MetadataForKind(f, gvk, opts...)
			if err != nil {
				return nil, nil, err
			}
			objs, err := h.Lister().List(labels.Everything())
			return h, names(objs), err
		}},
	}
	kinds := []struct {
		name     string
		gvk      schema.GroupVersionKind
		opts     []generic.InformerOption
		wantName schema.GroupVersionResource
		wantKeys []string
	}{
		{name: "namespaced", gvk: widget.GVK, wantName: widget.GVR, wantKeys: []string{"team-a/large", "team-a/small", "team-b/small"}},
		{name: "cluster-scoped, another plural, asked in a namespace", gvk: gizmoGVK, opts: []generic.InformerOption{generic.WithNamespace("team-a")},
			wantName: gizmoGVR.GroupVersion().WithResource("gizmos"), wantKeys: []string{"alpha", "beta"}},
	}
	for _, view := range views {
		for _, kind := range kinds {
			t.Run(view.name+"/"+kind.name, func(t *testing.T) {
				factory, mapper := newLaterFactory(t)
				informer, _, err := view.acquire(factory, kind.gvk, kind.opts...)
				if err != nil {
					t.Fatalf("before the CRD: %v", err)
				}
				if diff := cmp.Diff(kind.wantName, informer.GroupVersionResource()); diff != "" {
					t.Errorf("resource named by the guess from the kind (-want +got):\n%s", diff)
				}
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				factory.Start(ctx)
				waitForState(t, informer, generic.NotServed)

				mapper.install()
				waitForState(t, informer, generic.Synced)
				again, keys, err := view.acquire(factory, kind.gvk, kind.opts...)
				check(t, err)
				if diff := cmp.Diff(kind.wantKeys, keys); diff != "" {
					t.Errorf("cached once served (-want +got):\n%s", diff)
				}
				if again.Informer() != informer.Informer() {
					t.Error("a later call made another informer")
				}
			})
		}
	}
}
