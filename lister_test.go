package generic_test

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"

	"github.com/generic-informers/generic"
)

func byNodeName(obj any) ([]string, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return nil, nil
	}
	return []string{pod.Spec.NodeName}, nil
}

// notFound is the status detail apierrors.NewNotFound gives for resource
// (group "" for core) and name.
func notFound(resource, name string) *metav1.StatusDetails {
	return &metav1.StatusDetails{Name: name, Kind: resource}
}

func TestLister(t *testing.T) {
	objs := loadTyped(t, "testdata/pods.yaml", "testdata/namespaces.yaml")
	pods := generic.NewLister[*corev1.Pod](
		indexerWith(t, only[*corev1.Pod](objs), cache.Indexers{"nodeName": byNodeName}),
		podsGVR.GroupResource())
	namespaces := generic.NewLister[*corev1.Namespace](
		indexerWith(t, only[*corev1.Namespace](objs), nil),
		namespacesGVR.GroupResource())

	one := func(obj runtime.Object, err error) ([]runtime.Object, error) {
		if err != nil {
			return nil, err
		}
		return []runtime.Object{obj}, nil
	}
	many := func(objs []*corev1.Pod, err error) ([]runtime.Object, error) {
		ret := make([]runtime.Object, len(objs))
		for i := range objs {
			ret[i] = objs[i]
		}
		return ret, err
	}
	tests := []struct {
		name     string
		read     func() ([]runtime.Object, error)
		wantKeys []string
		// wantNotFound, if not nil, is the NotFound error's details.
		wantNotFound *metav1.StatusDetails
		wantErr      bool
	}{{
		name:     "Get a cluster-scoped object by name",
		read:     func() ([]runtime.Object, error) { return one(namespaces.Get("team-a")) },
		wantKeys: []string{"team-a"},
	}, {
		name:     "Get a namespaced object in its namespace",
		read:     func() ([]runtime.Object, error) { return one(pods.Namespace("team-b").Get("web-0")) },
		wantKeys: []string{"team-b/web-0"},
	}, {
		name:         "Get a namespaced object without its namespace is NotFound",
		read:         func() ([]runtime.Object, error) { return one(pods.Get("web-0")) },
		wantNotFound: notFound("pods", "web-0"),
	}, {
		name:         "Get in a namespace that has no such object is NotFound for pods",
		read:         func() ([]runtime.Object, error) { return one(pods.Namespace("team-b").Get("db-0")) },
		wantNotFound: notFound("pods", "db-0"),
	}, {
		name:         "Get a missing cluster-scoped object is NotFound for namespaces",
		read:         func() ([]runtime.Object, error) { return one(namespaces.Get("team-z")) },
		wantNotFound: notFound("namespaces", "team-z"),
	}, {
		name:     "List everything across namespaces",
		read:     func() ([]runtime.Object, error) { return many(pods.List(labels.Everything())) },
		wantKeys: []string{"team-a/db-0", "team-a/web-0", "team-a/web-1", "team-b/web-0"},
	}, {
		name: "List with a label selector across namespaces",
		read: func() ([]runtime.Object, error) {
			return many(pods.List(labels.SelectorFromSet(labels.Set{"app": "web"})))
		},
		wantKeys: []string{"team-a/web-0", "team-a/web-1", "team-b/web-0"},
	}, {
		name: "List one namespace with a label selector",
		read: func() ([]runtime.Object, error) {
			return many(pods.Namespace("team-a").List(labels.SelectorFromSet(labels.Set{"tier": "backend"})))
		},
		wantKeys: []string{"team-a/db-0"},
	}, {
		name:     "List an empty namespace",
		read:     func() ([]runtime.Object, error) { return many(pods.Namespace("team-z").List(labels.Everything())) },
		wantKeys: []string{},
	}, {
		name:     "List with a nil selector matches nothing",
		read:     func() ([]runtime.Object, error) { return many(pods.List(nil)) },
		wantKeys: []string{},
	}, {
		name:     "List one namespace with a nil selector matches nothing",
		read:     func() ([]runtime.Object, error) { return many(pods.Namespace("team-a").List(nil)) },
		wantKeys: []string{},
	}, {
		name:     "ByIndex on a custom index",
		read:     func() ([]runtime.Object, error) { return many(pods.ByIndex("nodeName", "node-1")) },
		wantKeys: []string{"team-a/db-0", "team-a/web-0"},
	}, {
		name:     "ByIndex on the namespace index",
		read:     func() ([]runtime.Object, error) { return many(pods.ByIndex(cache.NamespaceIndex, "team-b")) },
		wantKeys: []string{"team-b/web-0"},
	}, {
		name:    "ByIndex on an unknown index is an error",
		read:    func() ([]runtime.Object, error) { return many(pods.ByIndex("no-such-index", "x")) },
		wantErr: true,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.read()
			if tc.wantNotFound != nil {
				var status apierrors.APIStatus
				if !apierrors.IsNotFound(err) || !errors.As(err, &status) {
					t.Fatalf("error = %v, want NotFound", err)
				}
				if diff := cmp.Diff(tc.wantNotFound, status.Status().Details); diff != "" {
					t.Errorf("NotFound details (-want +got):\n%s", diff)
				}
				return
			}
			if (err != nil) != tc.wantErr {
				t.Fatalf("error = %v, want error: %v", err, tc.wantErr)
			}
			if tc.wantErr {
				return
			}
			if diff := cmp.Diff(tc.wantKeys, keysOf(t, got)); diff != "" {
				t.Errorf("keys (-want +got):\n%s", diff)
			}
		})
	}
}

// TestListerNilIndexer: a Lister made over a nil indexer returns an error
// from every read instead of panicking.
func TestListerNilIndexer(t *testing.T) {
	pods := generic.NewLister[*corev1.Pod](nil, podsGVR.GroupResource())
	get := func(pod *corev1.Pod, err error) error { return err }
	list := func(pods []*corev1.Pod, err error) error { return err }
	tests := []struct {
		name string
		read func() error
	}{
		{"Get", func() error { return get(pods.Get("web-0")) }},
		{"Namespace Get", func() error { return get(pods.Namespace("team-a").Get("web-0")) }},
		{"List", func() error { return list(pods.List(labels.Everything())) }},
		{"Namespace List", func() error { return list(pods.Namespace("team-a").List(labels.Everything())) }},
		{"ByIndex", func() error { return list(pods.ByIndex(cache.NamespaceIndex, "team-a")) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.read()
			if err == nil || !strings.Contains(err.Error(), "nil cache.Indexer") {
				t.Errorf("error = %v, want one that names the nil cache.Indexer", err)
			}
		})
	}
}

// TestListerWrongTypeInIndexer checks that a value of another type in the
// indexer gives an error wrapping ErrUnexpectedType, never a panic, and that
// List still returns every T it found.
func TestListerWrongTypeInIndexer(t *testing.T) {
	objs := loadTyped(t, "testdata/pods.yaml", "testdata/configmaps.yaml")
	pods := generic.NewLister[*corev1.Pod](indexerWith(t, objs, nil), podsGVR.GroupResource())

	tests := []struct {
		name     string
		read     func() ([]*corev1.Pod, error)
		wantKeys []string
	}{{
		name: "Get of a ConfigMap key",
		read: func() ([]*corev1.Pod, error) {
			pod, err := pods.Namespace("team-a").Get("settings")
			if pod != nil {
				return []*corev1.Pod{pod}, err
			}
			return nil, err
		},
		wantKeys: []string{},
	}, {
		name:     "List of a namespace holding Pods and ConfigMaps",
		read:     func() ([]*corev1.Pod, error) { return pods.Namespace("team-b").List(labels.Everything()) },
		wantKeys: []string{"team-b/web-0"},
	}, {
		name:     "ByIndex of a namespace holding Pods and ConfigMaps",
		read:     func() ([]*corev1.Pod, error) { return pods.ByIndex(cache.NamespaceIndex, "team-b") },
		wantKeys: []string{"team-b/web-0"},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.read()
			if !errors.Is(err, generic.ErrUnexpectedType) {
				t.Errorf("error = %v, want one wrapping ErrUnexpectedType", err)
			}
			if diff := cmp.Diff(tc.wantKeys, keysOf(t, got)); diff != "" {
				t.Errorf("keys (-want +got):\n%s", diff)
			}
		})
	}
}

// TestNamespaceListersConcurrently reads many namespaces from several
// goroutines at once, past the number of NamespaceListers the Lister keeps:
// every read is right, and -race sees no race.
func TestNamespaceListersConcurrently(t *testing.T) {
	objs := loadTyped(t, "testdata/pods.yaml")
	pods := generic.NewLister[*corev1.Pod](indexerWith(t, only[*corev1.Pod](objs), nil), podsGVR.GroupResource())
	const namespaces = 12000 // more than the Lister keeps
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for w := range 4 {
		wg.Go(func() {
			for i := range namespaces {
				ns := "ns-" + strconv.Itoa((i+w*3000)%namespaces)
				if _, err := pods.Namespace(ns).Get("web-0"); !apierrors.IsNotFound(err) {
					errs <- fmt.Errorf("%s: %v, want NotFound", ns, err)
					return
				}
				if got, err := pods.Namespace("team-a").List(labels.Everything()); err != nil || len(got) != 3 {
					errs <- fmt.Errorf("team-a: %d Pods (error %v), want 3", len(got), err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
