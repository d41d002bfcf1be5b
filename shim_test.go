package generic_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"

	"github.com/generic-informers/generic"
)

func TestGenericListerShim(t *testing.T) {
	objs := loadTyped(t, "testdata/pods.yaml")
	shim := generic.NewGenericLister(generic.NewLister[*corev1.Pod](indexerWith(t, only[*corev1.Pod](objs), nil), podsGVR.GroupResource()))
	one := func(obj runtime.Object, err error) ([]runtime.Object, error) {
		if obj == nil {
			return nil, err
		}
		return []runtime.Object{obj}, err
	}
	tests := []struct {
		name         string
		read         func() ([]runtime.Object, error)
		wantKeys     []string
		wantNotFound bool
	}{
		{name: "List", read: func() ([]runtime.Object, error) { return shim.List(labels.Everything()) },
			wantKeys: []string{"team-a/db-0", "team-a/web-0", "team-a/web-1", "team-b/web-0"}},
		{name: "ByNamespace List", read: func() ([]runtime.Object, error) { return shim.ByNamespace("team-b").List(labels.Everything()) },
			wantKeys: []string{"team-b/web-0"}},
		{name: "ByNamespace Get", read: func() ([]runtime.Object, error) { return one(shim.ByNamespace("team-a").Get("db-0")) },
			wantKeys: []string{"team-a/db-0"}},
		// A miss returns a nil runtime.Object, not a typed nil pointer in a
		// non-nil interface.
		{name: "Get miss", read: func() ([]runtime.Object, error) { return one(shim.Get("db-0")) },
			wantKeys: []string{}, wantNotFound: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.read()
			if diff := cmp.Diff(tc.wantNotFound, apierrors.IsNotFound(err)); diff != "" {
				t.Fatalf("NotFound (-want +got):\n%s (error %v)", diff, err)
			}
			if !tc.wantNotFound && err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantKeys, keysOf(t, got)); diff != "" {
				t.Errorf("keys (-want +got):\n%s", diff)
			}
		})
	}
}

func TestGenericInformerShim(t *testing.T) {
	first, _ := podLists(t, true)
	informer := newInformer[*corev1.Pod](newScriptedListerWatcher(first), podsGVR, nil)
	shim := generic.NewGenericInformer(informer)
	if shim.Informer() != informer.Informer() {
		t.Error("shim.Informer() is not the informer's SharedIndexInformer")
	}
	if shim != generic.NewGenericInformer(informer) {
		t.Error("two shims of one informer are not equal")
	}
	stop := runInformer(t, informer.Run)
	defer stop()
	if !cache.WaitForCacheSync(testDone(t), shim.Informer().HasSynced) {
		t.Fatal("not synced")
	}
	got, err := shim.Lister().ByNamespace("team-b").Get("web-0")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff("nginx:1.27", podImage(got.(*corev1.Pod))); diff != "" {
		t.Errorf("image (-want +got):\n%s", diff)
	}
}
