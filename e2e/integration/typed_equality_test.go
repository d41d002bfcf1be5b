package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	"github.com/generic-informers/generic/e2e/internal/cluster"
	"github.com/generic-informers/generic/typed"
)

// TestTypedEqualsClientGo reads the built-in kinds of testdata/corpus and
// realistic Pods (testdata/realistic-pod.json made into the Pods of two
// Deployments, created by kube-controller-manager's field manager, their
// status written by the kubelet's) through the typed factory, whose
// objects share what repeats (typed.Clients.NoSharing off), and through
// client-go's generated informers, and requires every object to be equal
// (cmp.Diff), once synced and again after status updates and a delete. It
// also requires the typed cache to share labels maps, so that the test
// compares shared objects. hack/test.sh runs it with client-go's cache
// mutation detector too (KUBE_CACHE_MUTATION_DETECTOR=true).
func TestTypedEqualsClientGo(t *testing.T) {
	const prefix = "typedeq"
	c := newCluster(t, shared)
	apply(t, c, namespaces(prefix)...)
	var builtIn []schema.GroupVersionResource
	for _, obj := range loadExact(t, prefix, "corpus/crds.yaml", "corpus/objects.yaml") {
		apply(t, c, obj)
		gvk := obj.GroupVersionKind()
		if !clientgoscheme.Scheme.Recognizes(gvk) || gvk.Kind == "CustomResourceDefinition" {
			continue
		}
		mapping, err := c.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			t.Fatal(err)
		}
		builtIn = appendGVR(builtIn, mapping.Resource)
	}
	if len(builtIn) < 10 {
		t.Fatalf("the corpus has %d built-in kinds, want at least 10", len(builtIn))
	}
	clientset, err := kubernetes.NewForConfig(shared.Config)
	if err != nil {
		t.Fatal(err)
	}
	pods := createRealisticPods(t, clientset, prefix, 12)
	builtIn = appendGVR(builtIn, corev1.SchemeGroupVersion.WithResource("pods"))

	ours, theirs := typedListers(t, c, prefix, builtIn), clientGoListers(t, clientset, prefix, builtIn)
	requireEqual(t, "synced", builtIn, ours, theirs)

	ctx := testContext(t)
	for _, pod := range pods[:6] {
		pod.Status.Conditions = append(pod.Status.Conditions, corev1.PodCondition{Type: "example.com/Checked", Status: corev1.ConditionTrue})
		if _, err := clientset.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, pod, metav1.UpdateOptions{FieldManager: "kubelet"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := clientset.CoreV1().Pods(pods[11].Namespace).Delete(ctx, pods[11].Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	requireEqual(t, "after updates and a delete", builtIn, ours, theirs)

	podsGVR := corev1.SchemeGroupVersion.WithResource("pods")
	got := map[string]int{"ours": distinctLabelMaps(t, ours[podsGVR]), "client-go": distinctLabelMaps(t, theirs[podsGVR])}
	if got["ours"] >= got["client-go"] {
		t.Errorf("distinct labels maps of 11 Pods of two Deployments: %v; the typed cache shares none", got)
	}
}

func appendGVR(gvrs []schema.GroupVersionResource, gvr schema.GroupVersionResource) []schema.GroupVersionResource {
	for _, g := range gvrs {
		if g == gvr {
			return gvrs
		}
	}
	return append(gvrs, gvr)
}

// createRealisticPods creates n Pods made from testdata/realistic-pod.json,
// half of them of a second Deployment (other labels and owner), as the
// ReplicaSet controller and the kubelet write them, in <prefix>-b (the
// corpus limits and quotas <prefix>-a), and returns them as
// the server answered their status updates.
func createRealisticPods(t *testing.T, clientset kubernetes.Interface, prefix string, n int) []*corev1.Pod {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(testdata, "realistic-pod.json"))
	if err != nil {
		t.Fatal(err)
	}
	template := &corev1.Pod{}
	if err := json.Unmarshal(data, template); err != nil {
		t.Fatal(err)
	}
	ctx := testContext(t)
	var out []*corev1.Pod
	for i := range n {
		pod := template.DeepCopy()
		status := pod.Status
		pod.ObjectMeta = metav1.ObjectMeta{
			Namespace: prefix + "-b", Name: fmt.Sprintf("%s%05d", template.GenerateName, i), GenerateName: template.GenerateName,
			Labels: map[string]string{testLabel: prefix, "app": "svc-000", "pod-template-hash": template.Labels["pod-template-hash"]}, OwnerReferences: template.OwnerReferences,
		}
		if i%2 == 1 {
			pod.Labels["app"], pod.Labels["pod-template-hash"] = "svc-001", "other"
			pod.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "svc-001-other", UID: "00000000-0000-0000-0000-000000000001", Controller: ptrTo(true), BlockOwnerDeletion: ptrTo(true)}}
		}
		pod.Status = corev1.PodStatus{}
		created, err := clientset.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{FieldManager: "kube-controller-manager"})
		if err != nil {
			t.Fatal(err)
		}
		created.Status = *status.DeepCopy()
		ip := fmt.Sprintf("10.9.0.%d", i+1)
		created.Status.PodIP, created.Status.PodIPs = ip, []corev1.PodIP{{IP: ip}}
		updated, err := clientset.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, created, metav1.UpdateOptions{FieldManager: "kubelet"})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, updated)
	}
	return out
}

func ptrTo[T any](v T) *T { return &v }

// listers lists a resource's cached objects.
type listers map[schema.GroupVersionResource]func() ([]runtime.Object, error)

// typedListers syncs typed informers of gvrs (InformerForKind) over
// client-go's scheme, selecting prefix's objects.
func typedListers(t *testing.T, c *cluster.Cluster, prefix string, gvrs []schema.GroupVersionResource) listers {
	t.Helper()
	factory, err := typed.NewFactory(shared.Config, clientgoscheme.Scheme, ownObjects(prefix))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(factory.Shutdown)
	out := listers{}
	for _, gvr := range gvrs {
		gvk, err := c.Mapper.KindFor(gvr)
		if err != nil {
			t.Fatal(err)
		}
		handle, err := typed.InformerForKind(factory, gvk)
		if err != nil {
			t.Fatal(err)
		}
		out[gvr] = func() ([]runtime.Object, error) {
			objs, err := handle.Lister().List(labels.Everything())
			result := make([]runtime.Object, len(objs))
			for i, obj := range objs {
				result[i] = obj
			}
			return result, err
		}
	}
	syncAll(t, factory.Start, factory.WaitForCacheSync)
	return out
}

// clientGoListers syncs client-go's generated informers of gvrs,
// selecting prefix's objects.
func clientGoListers(t *testing.T, clientset kubernetes.Interface, prefix string, gvrs []schema.GroupVersionResource) listers {
	t.Helper()
	factory := informers.NewSharedInformerFactoryWithOptions(clientset, 0,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = testLabel + "=" + prefix }))
	out := listers{}
	for _, gvr := range gvrs {
		informer, err := factory.ForResource(gvr)
		if err != nil {
			t.Fatal(err)
		}
		out[gvr] = func() ([]runtime.Object, error) { return informer.Lister().List(labels.Everything()) }
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() { cancel(); factory.Shutdown() })
	factory.Start(ctx.Done())
	for gvr, ok := range factory.WaitForCacheSync(testContext(t).Done()) {
		if !ok {
			t.Fatalf("client-go's informer of %v did not sync", gvr)
		}
	}
	return out
}

// requireEqual waits until both caches hold the same objects at the same
// resourceVersions for every resource (a minute at most), then requires
// them equal.
func requireEqual(t *testing.T, when string, gvrs []schema.GroupVersionResource, ours, theirs listers) {
	t.Helper()
	ctx, cancel := context.WithTimeout(testContext(t), time.Minute)
	defer cancel()
	for _, gvr := range gvrs {
		var a, b []runtime.Object
		for {
			a, b = sortedObjects(t, ours[gvr]), sortedObjects(t, theirs[gvr])
			if cmp.Equal(versions(t, a), versions(t, b)) || ctx.Err() != nil {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		if diff := cmp.Diff(b, a); diff != "" {
			t.Errorf("%s: %v (-client-go +typed):\n%s", when, gvr, diff)
		}
	}
}

func sortedObjects(t *testing.T, list func() ([]runtime.Object, error)) []runtime.Object {
	t.Helper()
	objs, err := list()
	if err != nil {
		t.Fatal(err)
	}
	sort.Slice(objs, func(i, j int) bool { return keyOf(objs[i]) < keyOf(objs[j]) })
	return objs
}

// versions are the objects' keys and resourceVersions.
func versions(t *testing.T, objs []runtime.Object) []string {
	t.Helper()
	out := make([]string, len(objs))
	for i, obj := range objs {
		accessor, err := meta.Accessor(obj)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = keyOf(obj) + "@" + accessor.GetResourceVersion()
	}
	return out
}

// distinctLabelMaps counts the distinct labels maps (by address) of the
// cached Pods.
func distinctLabelMaps(t *testing.T, list func() ([]runtime.Object, error)) int {
	t.Helper()
	maps := map[uintptr]bool{}
	for _, obj := range sortedObjects(t, list) {
		maps[uintptr(reflect.ValueOf(obj.(*corev1.Pod).Labels).UnsafePointer())] = true
	}
	return len(maps)
}
