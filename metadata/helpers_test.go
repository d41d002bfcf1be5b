package metadata_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/generic-informers/generic"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/metadata"
	metadatafake "k8s.io/client-go/metadata/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
)

var (
	podsGVR       = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	namespacesGVR = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
)

// partial returns the metadata of a core/v1 object of kind, as the
// metadata client delivers it.
func partial(kind, namespace, name string, labels map[string]string) *metav1.PartialObjectMetadata {
	return &metav1.PartialObjectMetadata{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: kind},
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: labels},
	}
}

// seed is what newClient's cluster holds: three Pods in two namespaces and
// the two (cluster-scoped) Namespaces.
func seed() []runtime.Object {
	return []runtime.Object{
		partial("Pod", "team-a", "web-0", map[string]string{"app": "web"}),
		partial("Pod", "team-a", "db-0", map[string]string{"app": "db"}),
		partial("Pod", "team-b", "web-0", map[string]string{"app": "web"}),
		partial("Namespace", "", "team-a", nil),
		partial("Namespace", "", "team-b", nil),
	}
}

// newClient returns client-go's fake metadata client holding objs.
func newClient(t *testing.T, objs ...runtime.Object) *metadatafake.FakeMetadataClient {
	t.Helper()
	scheme := metadatafake.NewTestScheme()
	if err := metav1.AddMetaToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	return metadatafake.NewSimpleMetadataClient(scheme, objs...)
}

// waitForWatch waits until an informer of gvr watches client. The fake
// drops the events of changes made before a watch starts; a watch action
// is recorded, under the fake's lock, only together with its watcher.
func waitForWatch(t *testing.T, client *metadatafake.FakeMetadataClient, gvr schema.GroupVersionResource) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := wait.PollUntilContextCancel(ctx, 5*time.Millisecond, true, func(context.Context) (bool, error) {
		return slices.ContainsFunc(client.Actions(), func(a clienttesting.Action) bool {
			return a.GetVerb() == "watch" && a.GetResource() == gvr
		}), nil
	})
	if err != nil {
		t.Fatalf("no watch of %s: %v", gvr, err)
	}
}

// keys returns the cache keys of objs, sorted.
func keys[T any](objs []T) []string {
	ret := make([]string, 0, len(objs))
	for _, obj := range objs {
		key, err := cache.MetaNamespaceKeyFunc(obj)
		if err != nil {
			key = "<" + err.Error() + ">"
		}
		ret = append(ret, key)
	}
	slices.Sort(ret)
	return ret
}

// newTypedFactory returns the generic core's factory over client
// (generic.MetadataSource), shut down with the test.
func newTypedFactory(t *testing.T, client metadata.Interface) *generic.Factory[*metav1.PartialObjectMetadata] {
	t.Helper()
	factory, err := generic.NewFactory[*metav1.PartialObjectMetadata](generic.MetadataSource(client), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(factory.Shutdown)
	return factory
}

// acquire is factory.Acquire, failing the test on an error.
func acquire(t *testing.T, factory *generic.Factory[*metav1.PartialObjectMetadata], gvr schema.GroupVersionResource) generic.Handle[*metav1.PartialObjectMetadata] {
	t.Helper()
	handle, err := factory.Acquire(gvr)
	if err != nil {
		t.Fatal(err)
	}
	return handle
}
