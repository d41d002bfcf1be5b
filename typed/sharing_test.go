package typed_test

import (
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	clientfeatures "k8s.io/client-go/features"
	clientfeaturestesting "k8s.io/client-go/features/testing"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/internal/fixtures"
	"github.com/generic-informers/generic/internal/widget"
	"github.com/generic-informers/generic/typed"
)

// TestTypedObjectsShareMaps lists testdata/pods.yaml (three Pods labelled
// app=web) through typed informers of a protobuf server and counts the
// distinct labels maps of those Pods: by default equal maps are one map
// from their second sighting on, with Clients.NoSharing each Pod has its
// own, and a transform gets labels of its own, which it may write to in
// place. The objects are the same either way.
func TestTypedObjectsShareMaps(t *testing.T) {
	clientfeaturestesting.SetFeatureDuringTest(t, clientfeatures.WatchListClient, false)
	scheme := widget.NewScheme()
	httpServer := podsServer(t, scheme)
	defer httpServer.Close()

	// markOwn writes each object's name into its own labels, in place.
	markOwn := func(obj any) (any, error) {
		pod := obj.(*corev1.Pod)
		pod.Labels["written-for"] = pod.Namespace + "." + pod.Name
		return pod, nil
	}
	type result struct {
		WebLabelMaps int
		// WrittenFor is each Pod's label written-for, by its key.
		WrittenFor map[string]string
	}
	written := map[string]string{"team-a/db-0": "team-a.db-0", "team-a/web-0": "team-a.web-0", "team-a/web-1": "team-a.web-1", "team-b/web-0": "team-b.web-0"}
	cases := []struct {
		name      string
		noSharing bool
		transform cache.TransformFunc
		want      result
	}{
		{"default: equal labels are one map from their second sighting", false, nil, result{2, map[string]string{}}},
		{"NoSharing: every Pod has its own", true, nil, result{3, map[string]string{}}},
		{"a transform writes to labels of its own", false, markOwn, result{3, written}},
	}
	var reference []*corev1.Pod
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var opts []generic.FactoryOption
			if c.transform != nil {
				opts = append(opts, generic.WithTransform(c.transform))
			}
			factory, err := typed.NewFactoryForClients(typed.Clients{Config: &rest.Config{Host: httpServer.URL}, RESTMapper: newMapper(), NoSharing: c.noSharing}, scheme, opts...)
			check(t, err)
			defer factory.Shutdown()
			pods := mustInformer[*corev1.Pod](t, factory)
			startAndSync(t, factory)
			list, err := pods.Lister().List(labels.Everything())
			check(t, err)
			got := result{WrittenFor: map[string]string{}}
			maps := map[uintptr]bool{}
			for _, pod := range list {
				if w, ok := pod.Labels["written-for"]; ok {
					got.WrittenFor[pod.Namespace+"/"+pod.Name] = w
				}
				if pod.Labels["app"] == "web" {
					maps[uintptr(reflect.ValueOf(pod.Labels).UnsafePointer())] = true
				}
			}
			got.WebLabelMaps = len(maps)
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if c.transform != nil {
				return
			}
			slices.SortFunc(list, func(a, b *corev1.Pod) int {
				return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
			})
			if reference == nil {
				reference = list
			} else if diff := cmp.Diff(reference, list); diff != "" {
				t.Errorf("objects differ from the first case's (-first +this):\n%s", diff)
			}
		})
	}
}

// podsServer serves the Pods of testdata/pods.yaml (three of them
// labelled app=web) as a listServer: protobuf to a client that asks for it.
func podsServer(t *testing.T, scheme *runtime.Scheme) *httptest.Server {
	t.Helper()
	objs, err := fixtures.Load("../testdata/pods.yaml")
	check(t, err)
	typedObjs, err := fixtures.Typed(scheme, objs)
	check(t, err)
	podList := &corev1.PodList{}
	for _, obj := range typedObjs {
		podList.Items = append(podList.Items, *obj.(*corev1.Pod))
	}
	podList.ResourceVersion = "10"
	return httptest.NewServer(&listServer{t: t, codecs: serializer.NewCodecFactory(scheme), served: map[string]string{},
		lists: map[string]runtime.Object{"/api/v1/pods": podList}})
}
