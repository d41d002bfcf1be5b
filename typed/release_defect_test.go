package typed_test

import (
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/internal/fixtures"
	"github.com/generic-informers/generic/internal/widget"
	"github.com/generic-informers/generic/typed"
)

// forgetfulMapper is a RESTMapper that forgets the Widget kind once told
// to, as a discovery RESTMapper does when the Widget CRD is deleted or
// discovery fails.
type forgetfulMapper struct {
	meta.RESTMapper
	forgotten atomic.Bool
}

func (m *forgetfulMapper) forget() { m.forgotten.Store(true) }

// remember makes it know Widgets again, as once their CRD is installed.
func (m *forgetfulMapper) remember() { m.forgotten.Store(false) }

func (m *forgetfulMapper) RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	if m.forgotten.Load() && gk == widget.GVK.GroupKind() {
		return nil, &meta.NoKindMatchError{GroupKind: gk, SearchedVersions: versions}
	}
	return m.RESTMapper.RESTMapping(gk, versions...)
}

func (m *forgetfulMapper) RESTMappings(gk schema.GroupKind, versions ...string) ([]*meta.RESTMapping, error) {
	if m.forgotten.Load() && gk == widget.GVK.GroupKind() {
		return nil, &meta.NoKindMatchError{GroupKind: gk, SearchedVersions: versions}
	}
	return m.RESTMapper.RESTMappings(gk, versions...)
}

// newForgetfulFactory returns a typed Factory fed by client-go's fake
// dynamic client seeded with the Widget fixtures, whose RESTMapper is a
// forgetfulMapper that knows Widgets until told to forget them.
func newForgetfulFactory(t *testing.T) (*typed.Factory, *forgetfulMapper) {
	t.Helper()
	objs, err := fixtures.Load("../testdata/widgets.yaml")
	if err != nil {
		t.Fatal(err)
	}
	seed := make([]runtime.Object, len(objs))
	for i := range objs {
		seed[i] = objs[i]
	}
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{widget.GVR: "WidgetList"}, seed...)
	mapper := &forgetfulMapper{RESTMapper: newMapper()}
	factory, err := typed.NewFactoryForClients(typed.Clients{Dynamic: client, RESTMapper: mapper}, widget.NewScheme())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(factory.Shutdown)
	return factory, mapper
}

// TestReleaseAfterMapperForgetsKind is defect 10: typed.Release (gone
// since: Handle.Release is the one way) asked the RESTMapper for the
// resource again, so once the mapper had forgotten the kind (CRD deleted,
// discovery error) Release returned false and the informer ran on until
// Shutdown. The Handle InformerFor returns needs no RESTMapper, and drops
// exactly its own hold, once.
func TestReleaseAfterMapperForgetsKind(t *testing.T) {
	type step struct {
		name string
		// release drops a hold, given the factory and the handles.
		release   func(*typed.Factory, []generic.Handle[*widget.Widget]) bool
		want      bool
		wantState generic.State
	}
	handleRelease := func(i int) func(*typed.Factory, []generic.Handle[*widget.Widget]) bool {
		return func(_ *typed.Factory, handles []generic.Handle[*widget.Widget]) bool { return handles[i].Release() }
	}
	tests := []struct {
		name    string
		handles int
		steps   []step
	}{
		{
			name:    "Handle.Release twice",
			handles: 1,
			steps: []step{
				{name: "first call", release: handleRelease(0), want: true, wantState: generic.Stopped},
				{name: "second call", release: handleRelease(0), want: false, wantState: generic.Stopped},
			},
		},
		{
			name:    "two Handles need two releases",
			handles: 2,
			steps: []step{
				{name: "first handle", release: handleRelease(0), want: false, wantState: generic.Synced},
				{name: "first handle again", release: handleRelease(0), want: false, wantState: generic.Synced},
				{name: "second handle", release: handleRelease(1), want: true, wantState: generic.Stopped},
				{name: "second handle again", release: handleRelease(1), want: false, wantState: generic.Stopped},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			factory, mapper := newForgetfulFactory(t)
			handles := make([]generic.Handle[*widget.Widget], tc.handles)
			for i := range handles {
				h, err := typed.InformerFor[*widget.Widget](factory)
				check(t, err)
				handles[i] = h
			}
			startAndSync(t, factory)

			mapper.forget()
			if _, err := factory.Statuses()[widget.GVR]; !err {
				t.Fatal("no informer of Widgets")
			}
			for _, step := range tc.steps {
				if diff := cmp.Diff(step.want, step.release(factory, handles)); diff != "" {
					t.Errorf("%s: Release (-want +got):\n%s", step.name, diff)
				}
				// Release does not wait for the informer's goroutines: a
				// released informer stops soon after. Wait for its State:
				// client-go's IsStopped turns true before it (when the
				// shared informer's controller returns, before its handlers
				// are done), never after.
				if step.wantState == generic.Stopped {
					waitForState(t, handles[0], generic.Stopped)
				} else if diff := cmp.Diff(step.wantState, handles[0].Status().State); diff != "" {
					t.Errorf("%s: informer state (-want +got):\n%s", step.name, diff)
				}
				if diff := cmp.Diff(step.wantState == generic.Stopped, handles[0].Informer().IsStopped()); diff != "" {
					t.Errorf("%s: informer stopped (-want +got):\n%s", step.name, diff)
				}
			}
		})
	}
}
