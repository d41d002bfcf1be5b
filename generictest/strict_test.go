package generictest_test

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/generic-informers/generic/generictest"
	"github.com/generic-informers/generic/internal/widget"
)

// podClient writes Pods in team-a, whichever client it is over.
type podClient interface {
	get(ctx context.Context, name string) (*corev1.Pod, error)
	create(ctx context.Context, pod *corev1.Pod) (*corev1.Pod, error)
	update(ctx context.Context, pod *corev1.Pod) (*corev1.Pod, error)
	updateStatus(ctx context.Context, pod *corev1.Pod) (*corev1.Pod, error)
	patch(ctx context.Context, name string, pt types.PatchType, data []byte, subresources ...string) (*corev1.Pod, error)
	delete(ctx context.Context, name string, opts metav1.DeleteOptions) error
}

// typedPods is a podClient over a typed clientset.
type typedPods struct{ c kubernetes.Interface }

func (p typedPods) get(ctx context.Context, name string) (*corev1.Pod, error) {
	return p.c.CoreV1().Pods("team-a").Get(ctx, name, metav1.GetOptions{})
}

func (p typedPods) create(ctx context.Context, pod *corev1.Pod) (*corev1.Pod, error) {
	return p.c.CoreV1().Pods("team-a").Create(ctx, pod, metav1.CreateOptions{})
}

func (p typedPods) update(ctx context.Context, pod *corev1.Pod) (*corev1.Pod, error) {
	return p.c.CoreV1().Pods("team-a").Update(ctx, pod, metav1.UpdateOptions{})
}

func (p typedPods) updateStatus(ctx context.Context, pod *corev1.Pod) (*corev1.Pod, error) {
	return p.c.CoreV1().Pods("team-a").UpdateStatus(ctx, pod, metav1.UpdateOptions{})
}

func (p typedPods) patch(ctx context.Context, name string, pt types.PatchType, data []byte, subresources ...string) (*corev1.Pod, error) {
	return p.c.CoreV1().Pods("team-a").Patch(ctx, name, pt, data, metav1.PatchOptions{}, subresources...)
}

func (p typedPods) delete(ctx context.Context, name string, opts metav1.DeleteOptions) error {
	return p.c.CoreV1().Pods("team-a").Delete(ctx, name, opts)
}

// dynamicPods is a podClient over a dynamic client.
type dynamicPods struct{ c dynamic.Interface }

var podsGVR = schema.GroupVersionResource{Version: "v1", Resource: "pods"}

func (p dynamicPods) pods() dynamic.ResourceInterface {
	return p.c.Resource(podsGVR).Namespace("team-a")
}

func (p dynamicPods) get(ctx context.Context, name string) (*corev1.Pod, error) {
	return podOf(p.pods().Get(ctx, name, metav1.GetOptions{}))
}

func (p dynamicPods) create(ctx context.Context, pod *corev1.Pod) (*corev1.Pod, error) {
	return podOf(p.pods().Create(ctx, unstructuredPod(pod), metav1.CreateOptions{}))
}

func (p dynamicPods) update(ctx context.Context, pod *corev1.Pod) (*corev1.Pod, error) {
	return podOf(p.pods().Update(ctx, unstructuredPod(pod), metav1.UpdateOptions{}))
}

func (p dynamicPods) updateStatus(ctx context.Context, pod *corev1.Pod) (*corev1.Pod, error) {
	return podOf(p.pods().UpdateStatus(ctx, unstructuredPod(pod), metav1.UpdateOptions{}))
}

func (p dynamicPods) patch(ctx context.Context, name string, pt types.PatchType, data []byte, subresources ...string) (*corev1.Pod, error) {
	return podOf(p.pods().Patch(ctx, name, pt, data, metav1.PatchOptions{}, subresources...))
}

func (p dynamicPods) delete(ctx context.Context, name string, opts metav1.DeleteOptions) error {
	return p.pods().Delete(ctx, name, opts)
}

func unstructuredPod(pod *corev1.Pod) *unstructured.Unstructured {
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(pod)
	if err != nil {
		panic(err)
	}
	u := &unstructured.Unstructured{Object: content}
	u.SetAPIVersion("v1")
	u.SetKind("Pod")
	return u
}

func podOf(u *unstructured.Unstructured, err error) (*corev1.Pod, error) {
	if err != nil {
		return nil, err
	}
	pod := &corev1.Pod{}
	return pod, runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, pod)
}

// podClients are every client of the Fake, over which its writes must be
// as strict as an API server's.
var podClients = []struct {
	name string
	make func(t *testing.T, f *generictest.Fake) podClient
}{
	{"Dynamic", func(_ *testing.T, f *generictest.Fake) podClient { return dynamicPods{f.Dynamic()} }},
	{"Clientset", func(_ *testing.T, f *generictest.Fake) podClient { return typedPods{f.Clientset()} }},
	{"REST front, typed, JSON", func(t *testing.T, f *generictest.Fake) podClient {
		return typedPods{restClientset(t, f, runtime.ContentTypeJSON)}
	}},
	{"REST front, typed, protobuf", func(t *testing.T, f *generictest.Fake) podClient {
		return typedPods{restClientset(t, f, runtime.ContentTypeProtobuf)}
	}},
	{"REST front, dynamic", func(t *testing.T, f *generictest.Fake) podClient { return dynamicPods{restDynamic(t, f)} }},
}

// podState is what the tests of strict writes look at of a stored Pod.
type podState struct {
	Generation int64
	Image      string
	Node       string
	Phase      corev1.PodPhase
	Labels     map[string]string
}

func stateOf(p *corev1.Pod) podState {
	return podState{Generation: p.Generation, Image: p.Spec.Containers[0].Image, Node: p.Spec.NodeName, Phase: p.Status.Phase, Labels: p.Labels}
}

// seeded is team-a/web-0 as testdata/pods.yaml seeds it.
var seeded = podState{Generation: 1, Image: "nginx:1.27", Node: "node-1", Labels: map[string]string{"app": "web", "tier": "frontend"}}

// with returns s changed by change.
func (s podState) with(change func(*podState)) podState {
	s.Labels = maps.Clone(s.Labels)
	change(&s)
	return s
}

// isConflictSaying returns a check of a 409 Conflict whose message says msg.
func isConflictSaying(msg string) func(error) bool {
	return func(err error) bool { return apierrors.IsConflict(err) && strings.Contains(err.Error(), msg) }
}

const modified = "the object has been modified; please apply your changes to the latest version and try again"

// TestStrictWrites: whichever client writes (the fake dynamic client, the
// fake clientset, the REST front through client-go's typed and dynamic
// clients), the Fake checks and changes writes as kube-apiserver does:
// resourceVersion conflicts, generation, the status subresource, delete
// preconditions.
func TestStrictWrites(t *testing.T) {
	tests := []struct {
		name string
		// write makes the writes; the last one's error is returned.
		write func(ctx context.Context, c podClient) error
		// pod is the Pod read after the writes (default web-0).
		pod     string
		want    podState
		wantErr func(error) bool
	}{{
		name: "a create is at generation 1",
		write: func(ctx context.Context, c podClient) error {
			_, err := c.create(ctx, &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: "new", Generation: 7, Labels: map[string]string{"a": "b"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
			})
			return err
		},
		pod:  "new",
		want: podState{Generation: 1, Image: "busybox", Labels: map[string]string{"a": "b"}},
	}, {
		name: "an update of the spec bumps the generation",
		write: func(ctx context.Context, c podClient) error {
			pod, err := c.get(ctx, "web-0")
			if err != nil {
				return err
			}
			pod.Spec.Containers[0].Image = "nginx:1.28"
			_, err = c.update(ctx, pod)
			return err
		},
		want: seeded.with(func(s *podState) { s.Generation, s.Image = 2, "nginx:1.28" }),
	}, {
		name: "an update of metadata keeps the generation",
		write: func(ctx context.Context, c podClient) error {
			pod, err := c.get(ctx, "web-0")
			if err != nil {
				return err
			}
			pod.Labels["x"] = "y"
			pod.Generation = 5 // not the client's to set
			_, err = c.update(ctx, pod)
			return err
		},
		want: seeded.with(func(s *podState) { s.Labels["x"] = "y" }),
	}, {
		name: "an update with a stale resourceVersion is a conflict",
		write: func(ctx context.Context, c podClient) error {
			pod, err := c.get(ctx, "web-0")
			if err != nil {
				return err
			}
			pod.Labels["x"] = "y"
			if _, err := c.update(ctx, pod); err != nil {
				return fmt.Errorf("the first update: %v", err)
			}
			pod.Spec.Containers[0].Image = "nginx:1.28"
			_, err = c.update(ctx, pod) // still at the resourceVersion of the get
			return err
		},
		want:    seeded.with(func(s *podState) { s.Labels["x"] = "y" }),
		wantErr: isConflictSaying(modified),
	}, {
		name: "an update without resourceVersion is unconditional",
		write: func(ctx context.Context, c podClient) error {
			pod, err := c.get(ctx, "web-0")
			if err != nil {
				return err
			}
			if _, err := c.update(ctx, pod.DeepCopy()); err != nil {
				return fmt.Errorf("the first update: %v", err)
			}
			pod.ResourceVersion = ""
			pod.Spec.Containers[0].Image = "nginx:1.28"
			_, err = c.update(ctx, pod)
			return err
		},
		want: seeded.with(func(s *podState) { s.Generation, s.Image = 2, "nginx:1.28" }),
	}, {
		name: "an update keeps the stored status",
		write: func(ctx context.Context, c podClient) error {
			pod, err := c.get(ctx, "web-0")
			if err != nil {
				return err
			}
			pod.Status.Phase = corev1.PodRunning
			if pod, err = c.updateStatus(ctx, pod); err != nil {
				return fmt.Errorf("the status update: %v", err)
			}
			pod.Status.Phase = corev1.PodFailed
			pod.Labels["x"] = "y"
			_, err = c.update(ctx, pod)
			return err
		},
		want: seeded.with(func(s *podState) { s.Phase, s.Labels["x"] = corev1.PodRunning, "y" }),
	}, {
		name: "a status update changes the status only",
		write: func(ctx context.Context, c podClient) error {
			pod, err := c.get(ctx, "web-0")
			if err != nil {
				return err
			}
			pod.Status.Phase = corev1.PodRunning
			pod.Spec.Containers[0].Image = "nginx:1.28"
			pod.Labels["x"] = "y"
			_, err = c.updateStatus(ctx, pod)
			return err
		},
		want: seeded.with(func(s *podState) { s.Phase = corev1.PodRunning }),
	}, {
		name: "a status update with a stale resourceVersion is a conflict",
		write: func(ctx context.Context, c podClient) error {
			pod, err := c.get(ctx, "web-0")
			if err != nil {
				return err
			}
			pod.Labels["x"] = "y"
			if _, err := c.update(ctx, pod); err != nil {
				return fmt.Errorf("the update: %v", err)
			}
			pod.Status.Phase = corev1.PodRunning
			_, err = c.updateStatus(ctx, pod)
			return err
		},
		want:    seeded.with(func(s *podState) { s.Labels["x"] = "y" }),
		wantErr: isConflictSaying(modified),
	}, {
		name: "a merge patch of the spec bumps the generation",
		write: func(ctx context.Context, c podClient) error {
			_, err := c.patch(ctx, "web-0", types.MergePatchType, []byte(`{"spec":{"nodeName":"node-2"}}`))
			return err
		},
		want: seeded.with(func(s *podState) { s.Generation, s.Node = 2, "node-2" }),
	}, {
		name: "a strategic merge patch of labels keeps the generation",
		write: func(ctx context.Context, c podClient) error {
			_, err := c.patch(ctx, "web-0", types.StrategicMergePatchType, []byte(`{"metadata":{"labels":{"x":"y"}}}`))
			return err
		},
		want: seeded.with(func(s *podState) { s.Labels["x"] = "y" }),
	}, {
		name: "a patch of the status of the main resource is dropped",
		write: func(ctx context.Context, c podClient) error {
			_, err := c.patch(ctx, "web-0", types.MergePatchType, []byte(`{"status":{"phase":"Running"}}`))
			return err
		},
		want: seeded,
	}, {
		name: "a patch carrying a stale resourceVersion is a conflict",
		write: func(ctx context.Context, c podClient) error {
			_, err := c.patch(ctx, "web-0", types.MergePatchType, []byte(`{"metadata":{"resourceVersion":"1","labels":{"x":"y"}}}`))
			return err
		},
		want:    seeded,
		wantErr: isConflictSaying(modified),
	}, {
		name: "a patch carrying the stored resourceVersion applies",
		write: func(ctx context.Context, c podClient) error {
			pod, err := c.get(ctx, "web-0")
			if err != nil {
				return err
			}
			patch := fmt.Sprintf(`{"metadata":{"resourceVersion":%q,"labels":{"x":"y"}}}`, pod.ResourceVersion)
			_, err = c.patch(ctx, "web-0", types.MergePatchType, []byte(patch))
			return err
		},
		want: seeded.with(func(s *podState) { s.Labels["x"] = "y" }),
	}, {
		name: "a JSON patch of the status subresource changes the status only",
		write: func(ctx context.Context, c podClient) error {
			patch := `[{"op":"add","path":"/status","value":{"phase":"Running"}},{"op":"replace","path":"/spec/nodeName","value":"node-2"}]`
			_, err := c.patch(ctx, "web-0", types.JSONPatchType, []byte(patch), "status")
			return err
		},
		want: seeded.with(func(s *podState) { s.Phase = corev1.PodRunning }),
	}, {
		name: "a delete whose resourceVersion precondition fails is a conflict",
		write: func(ctx context.Context, c podClient) error {
			stale := "1"
			return c.delete(ctx, "web-0", metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: &stale}})
		},
		want:    seeded,
		wantErr: isConflictSaying("Precondition failed: ResourceVersion in precondition: 1"),
	}, {
		name: "a delete whose uid precondition fails is a conflict",
		write: func(ctx context.Context, c podClient) error {
			uid := types.UID("another")
			return c.delete(ctx, "web-0", metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
		},
		want:    seeded,
		wantErr: isConflictSaying("Precondition failed: UID in precondition: another"),
	}}
	for _, tc := range tests {
		for _, client := range podClients {
			t.Run(tc.name+"/"+client.name, func(t *testing.T) {
				t.Parallel()
				ctx := context.Background()
				fake := generictest.New(t, scheme.Scheme, generictest.Files("../testdata/pods.yaml"))
				err := tc.write(ctx, client.make(t, fake))
				switch {
				case tc.wantErr != nil && !tc.wantErr(err):
					t.Errorf("error %v, want another", err)
				case tc.wantErr == nil && err != nil:
					t.Errorf("error %v", err)
				}
				name := tc.pod
				if name == "" {
					name = "web-0"
				}
				stored, err := podOf(fake.Dynamic().Resource(podsGVR).Namespace("team-a").Get(ctx, name, metav1.GetOptions{}))
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(tc.want, stateOf(stored)); diff != "" {
					t.Errorf("stored pod (-want +got):\n%s", diff)
				}
			})
		}
	}
}

// customState is what the tests of custom resources' writes look at.
type customState struct {
	Generation   int64
	Labels       map[string]string
	Spec, Status map[string]any
}

var gizmosGVR = schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "gizmos"}

// TestCustomResourceStatus: a custom resource has a status subresource if
// its CRD fixture declares one, as in kube-apiserver: an update of the
// main resource then keeps the stored status and an update of the status
// changes only the status; without one, the status is written through the
// main resource (a change of it bumps the generation) and there is no
// status to update. It holds for the fake dynamic client and the REST
// front alike.
func TestCustomResourceStatus(t *testing.T) {
	withCRDs := []string{"../testdata/crds/widgets.example.com.yaml", "../testdata/widgets.yaml", "../testdata/crds/gizmos.example.com.yaml", "../testdata/gizmos.yaml"}
	smallSpec := map[string]any{"size": int64(1), "color": "blue", "configMapName": "settings"}
	tests := []struct {
		name     string
		fixtures []string
		gvr      schema.GroupVersionResource
		// namespace and object name the object written and read.
		namespace, object string
		write             func(ctx context.Context, r dynamic.ResourceInterface) error
		want              customState
		wantErr           func(error) bool
	}{{
		name:     "an update of a Widget keeps its stored status",
		fixtures: withCRDs, gvr: widget.GVR, namespace: "team-a", object: "small",
		write: func(ctx context.Context, r dynamic.ResourceInterface) error {
			u, err := r.Get(ctx, "small", metav1.GetOptions{})
			if err != nil {
				return err
			}
			u.Object["status"] = map[string]any{"ready": true}
			if u, err = r.UpdateStatus(ctx, u, metav1.UpdateOptions{}); err != nil {
				return fmt.Errorf("the status update: %v", err)
			}
			u.Object["status"] = map[string]any{"ready": false}
			u.Object["spec"].(map[string]any)["size"] = int64(5)
			_, err = r.Update(ctx, u, metav1.UpdateOptions{})
			return err
		},
		want: customState{Generation: 2, Labels: map[string]string{"size": "small"},
			Spec:   map[string]any{"size": int64(5), "color": "blue", "configMapName": "settings"},
			Status: map[string]any{"ready": true}},
	}, {
		name:     "a status update of a Widget changes its status only",
		fixtures: withCRDs, gvr: widget.GVR, namespace: "team-a", object: "small",
		write: func(ctx context.Context, r dynamic.ResourceInterface) error {
			u, err := r.Get(ctx, "small", metav1.GetOptions{})
			if err != nil {
				return err
			}
			u.Object["status"] = map[string]any{"ready": true}
			u.Object["spec"] = map[string]any{"size": int64(5)}
			u.SetLabels(map[string]string{"size": "huge"})
			_, err = r.UpdateStatus(ctx, u, metav1.UpdateOptions{})
			return err
		},
		want: customState{Generation: 1, Labels: map[string]string{"size": "small"}, Spec: smallSpec, Status: map[string]any{"ready": true}},
	}, {
		name:     "a status patch of a Widget changes its status only",
		fixtures: withCRDs, gvr: widget.GVR, namespace: "team-a", object: "small",
		write: func(ctx context.Context, r dynamic.ResourceInterface) error {
			_, err := r.Patch(ctx, "small", types.MergePatchType, []byte(`{"spec":{"size":5},"status":{"ready":true}}`), metav1.PatchOptions{}, "status")
			return err
		},
		want: customState{Generation: 1, Labels: map[string]string{"size": "small"}, Spec: smallSpec, Status: map[string]any{"ready": true}},
	}, {
		name:     "an update of a Gizmo, whose CRD declares no status subresource, writes its status",
		fixtures: withCRDs, gvr: gizmosGVR, object: "alpha",
		write: func(ctx context.Context, r dynamic.ResourceInterface) error {
			u, err := r.Get(ctx, "alpha", metav1.GetOptions{})
			if err != nil {
				return err
			}
			u.Object["status"] = map[string]any{"on": true}
			_, err = r.Update(ctx, u, metav1.UpdateOptions{})
			return err
		},
		// Without a status subresource, a change of the status is a change.
		want: customState{Generation: 2, Labels: map[string]string{"tier": "gold"}, Spec: map[string]any{"power": int64(9)}, Status: map[string]any{"on": true}},
	}, {
		name:     "an update of a Gizmo's labels keeps its generation",
		fixtures: withCRDs, gvr: gizmosGVR, object: "alpha",
		write: func(ctx context.Context, r dynamic.ResourceInterface) error {
			u, err := r.Get(ctx, "alpha", metav1.GetOptions{})
			if err != nil {
				return err
			}
			u.SetLabels(map[string]string{"tier": "silver"})
			_, err = r.Update(ctx, u, metav1.UpdateOptions{})
			return err
		},
		want: customState{Generation: 1, Labels: map[string]string{"tier": "silver"}, Spec: map[string]any{"power": int64(9)}},
	}, {
		name:     "a Gizmo has no status to update",
		fixtures: withCRDs, gvr: gizmosGVR, object: "alpha",
		write: func(ctx context.Context, r dynamic.ResourceInterface) error {
			u, err := r.Get(ctx, "alpha", metav1.GetOptions{})
			if err != nil {
				return err
			}
			u.Object["status"] = map[string]any{"on": true}
			_, err = r.UpdateStatus(ctx, u, metav1.UpdateOptions{})
			return err
		},
		want:    customState{Generation: 1, Labels: map[string]string{"tier": "gold"}, Spec: map[string]any{"power": int64(9)}},
		wantErr: apierrors.IsNotFound,
	}, {
		name:     "a Widget with no CRD fixture has no status subresource",
		fixtures: []string{"../testdata/widgets.yaml"}, gvr: widget.GVR, namespace: "team-a", object: "small",
		write: func(ctx context.Context, r dynamic.ResourceInterface) error {
			u, err := r.Get(ctx, "small", metav1.GetOptions{})
			if err != nil {
				return err
			}
			u.Object["status"] = map[string]any{"ready": true}
			if u, err = r.Update(ctx, u, metav1.UpdateOptions{}); err != nil {
				return fmt.Errorf("the update: %v", err)
			}
			_, err = r.UpdateStatus(ctx, u, metav1.UpdateOptions{})
			return err
		},
		want:    customState{Generation: 2, Labels: map[string]string{"size": "small"}, Spec: smallSpec, Status: map[string]any{"ready": true}},
		wantErr: apierrors.IsNotFound,
	}}
	clients := []struct {
		name string
		make func(t *testing.T, f *generictest.Fake) dynamic.Interface
	}{
		{"Dynamic", func(_ *testing.T, f *generictest.Fake) dynamic.Interface { return f.Dynamic() }},
		{"REST front", restDynamic},
	}
	for _, tc := range tests {
		for _, client := range clients {
			t.Run(tc.name+"/"+client.name, func(t *testing.T) {
				t.Parallel()
				ctx := context.Background()
				fake := generictest.New(t, widget.NewScheme(), generictest.Files(tc.fixtures...))
				resource := func(c dynamic.Interface) dynamic.ResourceInterface {
					if tc.namespace == "" {
						return c.Resource(tc.gvr)
					}
					return c.Resource(tc.gvr).Namespace(tc.namespace)
				}
				err := tc.write(ctx, resource(client.make(t, fake)))
				switch {
				case tc.wantErr != nil && !tc.wantErr(err):
					t.Errorf("error %v, want another", err)
				case tc.wantErr == nil && err != nil:
					t.Errorf("error %v", err)
				}
				stored, err := resource(fake.Dynamic()).Get(ctx, tc.object, metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				spec, _, _ := unstructured.NestedMap(stored.Object, "spec")
				status, _, _ := unstructured.NestedMap(stored.Object, "status")
				got := customState{Generation: stored.GetGeneration(), Labels: stored.GetLabels(), Spec: spec, Status: status}
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("stored object (-want +got):\n%s", diff)
				}
			})
		}
	}
}

// TestFakeUpdateStatus: the Fake's own Update keeps the stored status of a
// resource with a status subresource, and UpdateStatus sets it; both
// return once handlers have seen them.
func TestFakeUpdateStatus(t *testing.T) {
	t.Parallel()
	fake := generictest.New(t, widget.NewScheme(), generictest.Files("../testdata/crds/widgets.example.com.yaml", "../testdata/widgets.yaml"))
	widgets := generictest.NewInformer[*widget.Widget](fake)
	rec := generictest.NewRecorder[*widget.Widget]()
	if _, err := widgets.AddEventHandler(rec); err != nil {
		t.Fatal(err)
	}
	rec.Reset()
	small := func(size int32, ready bool) *widget.Widget {
		return &widget.Widget{
			ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "small", Labels: map[string]string{"size": "small"}},
			Spec:       widget.Spec{Size: size, Color: "blue", ConfigMapName: "settings"},
			Status:     widget.Status{Ready: ready},
		}
	}
	show := func() string {
		w, err := widgets.Lister().Namespace("team-a").Get("small")
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("generation=%d size=%d ready=%t", w.Generation, w.Spec.Size, w.Status.Ready)
	}
	var got []string
	fake.UpdateStatus(small(7, true))
	got = append(got, show())
	fake.Update(small(2, false))
	got = append(got, show())
	want := []string{"generation=1 size=1 ready=true", "generation=2 size=2 ready=true"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("cached Widget after each change (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]generictest.Event{{Verb: generictest.Modified, Key: "team-a/small"}, {Verb: generictest.Modified, Key: "team-a/small"}},
		rec.Events(), generictest.IgnoreResourceVersion()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}
