package generictest_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/generictest"
)

var configMapsGVR = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

// TestMetadataInformer: the Fake's changes reach the handlers of a
// metadata-only informer before they return, as those of any informer of
// the Fake, and within its own selection.
func TestMetadataInformer(t *testing.T) {
	configMap := func(namespace, name string, labels map[string]string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: labels}}
	}
	tests := []struct {
		name   string
		opts   []generic.InformerOption
		change func(f *generictest.Fake)
		want   []generictest.Event
	}{{
		name:   "create",
		change: func(f *generictest.Fake) { f.Create(configMap("team-a", "new", nil)) },
		want:   []generictest.Event{{Verb: generictest.Added, Key: "team-a/new"}},
	}, {
		name:   "update",
		change: func(f *generictest.Fake) { f.Update(configMap("team-a", "settings", map[string]string{"app": "db"})) },
		want:   []generictest.Event{{Verb: generictest.Modified, Key: "team-a/settings"}},
	}, {
		name:   "delete",
		change: func(f *generictest.Fake) { f.Delete(configMap("team-a", "flags", nil)) },
		want:   []generictest.Event{{Verb: generictest.Deleted, Key: "team-a/flags"}},
	}, {
		name:   "an update out of the informer's label selector is a delete",
		opts:   []generic.InformerOption{generic.WithLabelSelector("app=web")},
		change: func(f *generictest.Fake) { f.Update(configMap("team-a", "settings", map[string]string{"app": "db"})) },
		want:   []generictest.Event{{Verb: generictest.Deleted, Key: "team-a/settings"}},
	}, {
		name:   "a change out of the informer's namespace is not waited for",
		opts:   []generic.InformerOption{generic.WithNamespace("team-b")},
		change: func(f *generictest.Fake) { f.Create(configMap("team-a", "new", nil)) },
		want:   nil,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fake := generictest.New(t, scheme.Scheme, generictest.Files("../testdata/configmaps.yaml"))
			configMaps := generictest.NewMetadataInformer(fake, configMapsGVR, tc.opts...)
			rec := generictest.NewRecorder[*metav1.PartialObjectMetadata]()
			if _, err := configMaps.AddEventHandler(rec); err != nil {
				t.Fatal(err)
			}
			rec.Reset() // the cached objects, replayed to a new handler
			tc.change(fake)
			if diff := cmp.Diff(tc.want, rec.Events(), generictest.IgnoreResourceVersion()); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}

// TestMetadataInformerObjects: a metadata-only informer holds the objects'
// metadata, with no TypeMeta, as client-go's metadata client returns them.
func TestMetadataInformerObjects(t *testing.T) {
	t.Parallel()
	fake := generictest.New(t, scheme.Scheme, generictest.Files("../testdata/configmaps.yaml"))
	configMaps := generictest.NewMetadataInformer(fake, configMapsGVR, generic.WithNamespace("team-a"))
	fake.Update(&corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "flags", Annotations: map[string]string{"a": "b"}},
		Data:       map[string]string{"beta": "true"}, // as it was: the generation stays
	})

	got, err := configMaps.Lister().List(labels.Everything())
	if err != nil {
		t.Fatal(err)
	}
	want := []*metav1.PartialObjectMetadata{
		{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "flags", Generation: 1, Annotations: map[string]string{"a": "b"}}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "settings", Generation: 1, Labels: map[string]string{"app": "web"}}},
	}
	if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(metav1.ObjectMeta{}, "ResourceVersion"),
		cmpopts.SortSlices(func(a, b *metav1.PartialObjectMetadata) bool { return a.Name < b.Name })); diff != "" {
		t.Errorf("cached objects (-want +got):\n%s", diff)
	}
}
