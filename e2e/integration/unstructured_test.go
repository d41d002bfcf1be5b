package integration

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/generic-informers/generic/internal/widget"
)

// TestUnstructuredFactoryOnWidgetCRD creates the Widget CRD and Widgets in
// two namespaces, reads them through the unstructured factory, and checks
// that updates and deletes reach handlers with the right objects.
func TestUnstructuredFactoryOnWidgetCRD(t *testing.T) {
	c := newCluster(t, shared)
	apply(t, c, namespaces("unstr")...)
	apply(t, c, load(t, "unstr", "crds/widgets.example.com.yaml", "widgets.yaml")...)

	factory := dynamicFactory(t, c.Dynamic, ownObjects("unstr"))
	informer := acquire(t, factory, widget.GVR)
	rec := newRecorder(unstructuredSize)
	if _, err := informer.AddEventHandler(rec); err != nil {
		t.Fatal(err)
	}
	syncAll(t, factory.Start, factory.WaitForCacheSync)
	if diff := cmp.Diff([]event{
		{Verb: "ADDED", Key: "unstr-a/large", State: "size=10"},
		{Verb: "ADDED", Key: "unstr-a/small", State: "size=1"},
		{Verb: "ADDED", Key: "unstr-b/small", State: "size=2"},
	}, rec.next(t, 3)); diff != "" {
		t.Fatalf("initial events (-want +got):\n%s", diff)
	}

	lister := informer.Lister()
	reads := []struct {
		name string
		read func() ([]*unstructured.Unstructured, error)
		want []string
	}{
		{name: "Get in a namespace", read: func() ([]*unstructured.Unstructured, error) {
			w, err := lister.Namespace("unstr-b").Get("small")
			return []*unstructured.Unstructured{w}, err
		}, want: []string{"unstr-b/small"}},
		{name: "namespace List", read: func() ([]*unstructured.Unstructured, error) {
			return lister.Namespace("unstr-a").List(labels.Everything())
		}, want: []string{"unstr-a/large", "unstr-a/small"}},
		{name: "label selector List across namespaces", read: func() ([]*unstructured.Unstructured, error) {
			return lister.List(labels.SelectorFromSet(labels.Set{"size": "small"}))
		}, want: []string{"unstr-a/small", "unstr-b/small"}},
	}
	for _, tc := range reads {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.read()
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, keys(got)); diff != "" {
				t.Errorf("keys (-want +got):\n%s", diff)
			}
		})
	}

	widgets := c.Dynamic.Resource(widget.GVR)
	ctx := context.Background()
	changes := []struct {
		name string
		act  func() error
		want []event
	}{
		{name: "update", act: func() error {
			w, err := widgets.Namespace("unstr-a").Get(ctx, "large", metav1.GetOptions{})
			if err != nil {
				return err
			}
			if err := unstructured.SetNestedField(w.Object, int64(20), "spec", "size"); err != nil {
				return err
			}
			_, err = widgets.Namespace("unstr-a").Update(ctx, w, metav1.UpdateOptions{})
			return err
		}, want: []event{{Verb: "MODIFIED", Key: "unstr-a/large", State: "size=20"}}},
		{name: "delete", act: func() error {
			return widgets.Namespace("unstr-b").Delete(ctx, "small", metav1.DeleteOptions{})
		}, want: []event{{Verb: "DELETED", Key: "unstr-b/small", State: "size=2"}}},
	}
	for _, tc := range changes {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.act(); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, rec.next(t, len(tc.want))); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
	all, err := lister.List(labels.Everything())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"unstr-a/large", "unstr-a/small"}, keys(all)); diff != "" {
		t.Errorf("cache after changes (-want +got):\n%s", diff)
	}
}
