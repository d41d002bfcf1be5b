package generictest_test

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/cache"

	"github.com/generic-informers/generic/generictest"
	"github.com/generic-informers/generic/internal/widget"
)

// noOpTimeout bounds the waits of the tests of no-op writes: a write that
// leaves Settle or WaitIdle waiting for an event that never comes, or a
// controller that loops, fails in seconds.
const noOpTimeout = 10 * time.Second

// alwaysIdle is an Idler with nothing queued: WaitIdle then waits for the
// writes only.
type alwaysIdle struct{}

func (alwaysIdle) Idle() bool { return true }

// rvNames names resourceVersions for a test's want: "base" is the one read
// before the writes, "new 1", "new 2"... the others, in the order met.
type rvNames struct {
	base  string
	names map[string]string
}

func (n *rvNames) name(rv string) string {
	if rv == n.base {
		return "base"
	}
	if n.names == nil {
		n.names = map[string]string{}
	}
	if _, ok := n.names[rv]; !ok {
		n.names[rv] = "new " + strconv.Itoa(len(n.names)+1)
	}
	return n.names[rv]
}

// writeOutcome is what a test of no-op writes looks at.
type writeOutcome struct {
	// Returned names the resourceVersion of each object the writes
	// returned; Stored that of the Pod stored after them.
	Returned []string
	Stored   string
	// Events are what a handler received from the writes on, up to a
	// Pod created after them (sentinel): an event of the writes would come
	// before its.
	Events []generictest.Event
}

// TestNoOpWriteKeepsResourceVersion: whichever client writes, an update, a
// status update or a patch (merge, strategic merge, JSON, apply) that
// changes nothing is no write, as in kube-apiserver: the stored object
// keeps its resourceVersion, which the write returns, no handler is told of
// it, a second such write at the same resourceVersion is no conflict, and
// Settle and WaitIdle have nothing to wait for. A write that changes
// something is stamped and sent as before.
func TestNoOpWriteKeepsResourceVersion(t *testing.T) {
	sentinelAdded := generictest.Event{Verb: generictest.Added, Key: "team-a/sentinel"}
	web0Modified := generictest.Event{Verb: generictest.Modified, Key: "team-a/web-0"}
	setRunning := func(ctx context.Context, c podClient) error {
		pod, err := c.get(ctx, "web-0")
		if err != nil {
			return err
		}
		pod.Status.Phase = corev1.PodRunning
		_, err = c.updateStatus(ctx, pod)
		return err
	}
	// twice makes write twice, at the resourceVersion of pod.
	twice := func(write func(context.Context, *corev1.Pod) (*corev1.Pod, error)) func(context.Context, podClient, *corev1.Pod) ([]*corev1.Pod, error) {
		return func(ctx context.Context, _ podClient, pod *corev1.Pod) ([]*corev1.Pod, error) {
			var returned []*corev1.Pod
			for i := range 2 {
				got, err := write(ctx, pod.DeepCopy())
				if err != nil {
					return returned, fmt.Errorf("write %d: %w", i+1, err)
				}
				returned = append(returned, got)
			}
			return returned, nil
		}
	}
	tests := []struct {
		name string
		// prepare, if set, writes before the resourceVersion named base is
		// read.
		prepare func(ctx context.Context, c podClient) error
		// write writes pod, web-0 as read at base, and returns what each
		// write returned.
		write func(ctx context.Context, c podClient, pod *corev1.Pod) ([]*corev1.Pod, error)
		want  writeOutcome
	}{{
		name: "an update that changes nothing, twice at the same resourceVersion",
		write: func(ctx context.Context, c podClient, pod *corev1.Pod) ([]*corev1.Pod, error) {
			return twice(func(ctx context.Context, p *corev1.Pod) (*corev1.Pod, error) { return c.update(ctx, p) })(ctx, c, pod)
		},
		want: writeOutcome{Returned: []string{"base", "base"}, Stored: "base", Events: []generictest.Event{sentinelAdded}},
	}, {
		name: "an update of the main resource that changes only the status, which it keeps",
		write: func(ctx context.Context, c podClient, pod *corev1.Pod) ([]*corev1.Pod, error) {
			pod.Status.Phase = corev1.PodFailed
			got, err := c.update(ctx, pod)
			return []*corev1.Pod{got}, err
		},
		want: writeOutcome{Returned: []string{"base"}, Stored: "base", Events: []generictest.Event{sentinelAdded}},
	}, {
		name:    "a status update that changes nothing, twice at the same resourceVersion",
		prepare: setRunning,
		write: func(ctx context.Context, c podClient, pod *corev1.Pod) ([]*corev1.Pod, error) {
			return twice(func(ctx context.Context, p *corev1.Pod) (*corev1.Pod, error) { return c.updateStatus(ctx, p) })(ctx, c, pod)
		},
		want: writeOutcome{Returned: []string{"base", "base"}, Stored: "base", Events: []generictest.Event{sentinelAdded}},
	}, {
		name: "a merge patch that changes nothing, twice at the same resourceVersion",
		write: func(ctx context.Context, c podClient, pod *corev1.Pod) ([]*corev1.Pod, error) {
			patch := fmt.Sprintf(`{"metadata":{"resourceVersion":%q,"labels":{"app":"web"}}}`, pod.ResourceVersion)
			return twice(func(ctx context.Context, _ *corev1.Pod) (*corev1.Pod, error) {
				return c.patch(ctx, "web-0", types.MergePatchType, []byte(patch))
			})(ctx, c, pod)
		},
		want: writeOutcome{Returned: []string{"base", "base"}, Stored: "base", Events: []generictest.Event{sentinelAdded}},
	}, {
		name: "a strategic merge patch that changes nothing",
		write: func(ctx context.Context, c podClient, _ *corev1.Pod) ([]*corev1.Pod, error) {
			patch := `{"metadata":{"labels":{"tier":"frontend"}},"spec":{"containers":[{"name":"web","image":"nginx:1.27"}]}}`
			got, err := c.patch(ctx, "web-0", types.StrategicMergePatchType, []byte(patch))
			return []*corev1.Pod{got}, err
		},
		want: writeOutcome{Returned: []string{"base"}, Stored: "base", Events: []generictest.Event{sentinelAdded}},
	}, {
		name: "a JSON patch that changes nothing",
		write: func(ctx context.Context, c podClient, _ *corev1.Pod) ([]*corev1.Pod, error) {
			patch := `[{"op":"test","path":"/spec/nodeName","value":"node-1"},{"op":"replace","path":"/spec/nodeName","value":"node-1"}]`
			got, err := c.patch(ctx, "web-0", types.JSONPatchType, []byte(patch))
			return []*corev1.Pod{got}, err
		},
		want: writeOutcome{Returned: []string{"base"}, Stored: "base", Events: []generictest.Event{sentinelAdded}},
	}, {
		name: "an apply that changes nothing",
		write: func(ctx context.Context, c podClient, _ *corev1.Pod) ([]*corev1.Pod, error) {
			patch := `{"apiVersion":"v1","kind":"Pod","metadata":{"namespace":"team-a","name":"web-0","labels":{"app":"web"}}}`
			got, err := c.patch(ctx, "web-0", types.ApplyPatchType, []byte(patch))
			return []*corev1.Pod{got}, err
		},
		want: writeOutcome{Returned: []string{"base"}, Stored: "base", Events: []generictest.Event{sentinelAdded}},
	}, {
		name:    "a patch of the status subresource that changes nothing",
		prepare: setRunning,
		write: func(ctx context.Context, c podClient, _ *corev1.Pod) ([]*corev1.Pod, error) {
			got, err := c.patch(ctx, "web-0", types.MergePatchType, []byte(`{"status":{"phase":"Running"}}`), "status")
			return []*corev1.Pod{got}, err
		},
		want: writeOutcome{Returned: []string{"base"}, Stored: "base", Events: []generictest.Event{sentinelAdded}},
	}, {
		name: "an update that changes a label is a write",
		write: func(ctx context.Context, c podClient, pod *corev1.Pod) ([]*corev1.Pod, error) {
			pod.Labels["x"] = "y"
			got, err := c.update(ctx, pod)
			return []*corev1.Pod{got}, err
		},
		want: writeOutcome{Returned: []string{"new 1"}, Stored: "new 1", Events: []generictest.Event{web0Modified, sentinelAdded}},
	}, {
		name: "a status update that changes the status is a write",
		write: func(ctx context.Context, c podClient, pod *corev1.Pod) ([]*corev1.Pod, error) {
			pod.Status.Phase = corev1.PodRunning
			got, err := c.updateStatus(ctx, pod)
			return []*corev1.Pod{got}, err
		},
		want: writeOutcome{Returned: []string{"new 1"}, Stored: "new 1", Events: []generictest.Event{web0Modified, sentinelAdded}},
	}, {
		name: "a patch that changes nothing after the same patch that changed something",
		write: func(ctx context.Context, c podClient, pod *corev1.Pod) ([]*corev1.Pod, error) {
			return twice(func(ctx context.Context, _ *corev1.Pod) (*corev1.Pod, error) {
				return c.patch(ctx, "web-0", types.MergePatchType, []byte(`{"metadata":{"labels":{"x":"y"}}}`))
			})(ctx, c, pod)
		},
		want: writeOutcome{Returned: []string{"new 1", "new 1"}, Stored: "new 1", Events: []generictest.Event{web0Modified, sentinelAdded}},
	}}
	for _, tc := range tests {
		for _, client := range podClients {
			t.Run(tc.name+"/"+client.name, func(t *testing.T) {
				t.Parallel()
				ctx := context.Background()
				fake := generictest.New(t, scheme.Scheme, generictest.Files("../testdata/pods.yaml"), generictest.Timeout(noOpTimeout))
				pods := generictest.NewInformer[*corev1.Pod](fake)
				rec := generictest.NewRecorder[*corev1.Pod]()
				if _, err := pods.AddEventHandler(rec); err != nil {
					t.Fatal(err)
				}
				c := client.make(t, fake)
				if tc.prepare != nil {
					if err := tc.prepare(ctx, c); err != nil {
						t.Fatalf("prepare: %v", err)
					}
					fake.Settle()
				}
				rec.Reset()
				base, err := c.get(ctx, "web-0")
				if err != nil {
					t.Fatal(err)
				}
				names := &rvNames{base: base.ResourceVersion}

				returned, err := tc.write(ctx, c, base.DeepCopy())
				if err != nil {
					t.Fatalf("write: %v", err)
				}
				// Nothing to wait for but the writes that were made.
				fake.Settle()
				fake.WaitIdle(alwaysIdle{})
				fake.Create(&corev1.Pod{
					ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "sentinel"},
					Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
				})

				var got writeOutcome
				for _, pod := range returned {
					got.Returned = append(got.Returned, names.name(pod.ResourceVersion))
				}
				stored, err := c.get(ctx, "web-0")
				if err != nil {
					t.Fatal(err)
				}
				got.Stored = names.name(stored.ResourceVersion)
				got.Events = rec.Events()
				if diff := cmp.Diff(tc.want, got, generictest.IgnoreResourceVersion()); diff != "" {
					t.Errorf("outcome (-want +got):\n%s", diff)
				}
			})
		}
	}
}

// TestNoOpWriteOfCustomResource: the Fake's own Update and UpdateStatus of
// a custom resource, from its Go type, that change nothing keep its
// resourceVersion and send no event, though the Go type writes fields the
// fixture has not (a null creationTimestamp) and its numbers as other Go
// types than JSON's.
func TestNoOpWriteOfCustomResource(t *testing.T) {
	small := func(ready bool) *widget.Widget {
		return &widget.Widget{
			ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "small", Labels: map[string]string{"size": "small"}},
			Spec:       widget.Spec{Size: 1, Color: "blue", ConfigMapName: "settings"},
			Status:     widget.Status{Ready: ready},
		}
	}
	tests := []struct {
		name  string
		write func(f *generictest.Fake) []*unstructured.Unstructured
		// want names the resourceVersions the writes returned.
		want       []string
		wantEvents []generictest.Event
	}{{
		name: "an update that changes nothing",
		write: func(f *generictest.Fake) []*unstructured.Unstructured {
			return []*unstructured.Unstructured{f.Update(small(false)), f.Update(small(false))}
		},
		want: []string{"base", "base"},
	}, {
		name: "a status update that changes nothing after one that changed the status",
		write: func(f *generictest.Fake) []*unstructured.Unstructured {
			return []*unstructured.Unstructured{f.UpdateStatus(small(true)), f.UpdateStatus(small(true))}
		},
		want:       []string{"new 1", "new 1"},
		wantEvents: []generictest.Event{{Verb: generictest.Modified, Key: "team-a/small"}},
	}, {
		name: "an update that changes the spec",
		write: func(f *generictest.Fake) []*unstructured.Unstructured {
			changed := small(false)
			changed.Spec.Size = 2
			return []*unstructured.Unstructured{f.Update(changed), f.Update(changed)}
		},
		want:       []string{"new 1", "new 1"},
		wantEvents: []generictest.Event{{Verb: generictest.Modified, Key: "team-a/small"}},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fake := generictest.New(t, widget.NewScheme(), generictest.Timeout(noOpTimeout),
				generictest.Files("../testdata/crds/widgets.example.com.yaml", "../testdata/widgets.yaml"))
			widgets := generictest.NewInformer[*widget.Widget](fake)
			rec := generictest.NewRecorder[*widget.Widget]()
			if _, err := widgets.AddEventHandler(rec); err != nil {
				t.Fatal(err)
			}
			rec.Reset()
			base, err := fake.Dynamic().Resource(widget.GVR).Namespace("team-a").Get(context.Background(), "small", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			names := &rvNames{base: base.GetResourceVersion()}
			var got []string
			for _, u := range tc.write(fake) {
				got = append(got, names.name(u.GetResourceVersion()))
			}
			fake.Settle()
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("resourceVersions returned (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantEvents, rec.Events(), generictest.IgnoreResourceVersion()); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}

// statusWriter is a controller, as the kubebuilder CronJob tutorial's, that
// writes the status of every Widget it is told of back as it found it, at
// the resourceVersion it found it at. Against kube-apiserver, such a write
// changes nothing and sets off nothing.
type statusWriter struct {
	resource dynamic.NamespaceableResourceInterface
	write    func(ctx context.Context, r dynamic.ResourceInterface, u *unstructured.Unstructured) error

	mu     sync.Mutex
	writes int
	errs   []error
}

func (s *statusWriter) OnAdd(u *unstructured.Unstructured, _ bool)               { s.reconcile(u) }
func (s *statusWriter) OnUpdate(_, u *unstructured.Unstructured)                 { s.reconcile(u) }
func (s *statusWriter) OnDelete(cache.DeletedObject[*unstructured.Unstructured]) {}

func (s *statusWriter) reconcile(u *unstructured.Unstructured) {
	s.mu.Lock()
	s.writes++
	s.mu.Unlock()
	err := s.write(context.Background(), s.resource.Namespace(u.GetNamespace()), u.DeepCopy())
	if err != nil {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.errs = append(s.errs, fmt.Errorf("%s/%s: %w", u.GetNamespace(), u.GetName(), err))
	}
}

// TestNoOpWriteBackSettles: a controller that writes back each status it
// sees unchanged (by update or patch of the status subresource) settles,
// as against kube-apiserver: its writes are no writes, and set off no
// event and so no write. Each write is at the resourceVersion of the
// object it saw, so none is a conflict.
func TestNoOpWriteBackSettles(t *testing.T) {
	tests := []struct {
		name  string
		write func(ctx context.Context, r dynamic.ResourceInterface, u *unstructured.Unstructured) error
	}{{
		name: "status update",
		write: func(ctx context.Context, r dynamic.ResourceInterface, u *unstructured.Unstructured) error {
			_, err := r.UpdateStatus(ctx, u, metav1.UpdateOptions{})
			return err
		},
	}, {
		name: "status merge patch at the resourceVersion seen",
		write: func(ctx context.Context, r dynamic.ResourceInterface, u *unstructured.Unstructured) error {
			status, _, _ := unstructured.NestedMap(u.Object, "status")
			patch, err := runtime.Encode(unstructured.UnstructuredJSONScheme, &unstructured.Unstructured{Object: map[string]any{
				"metadata": map[string]any{"resourceVersion": u.GetResourceVersion()},
				"status":   status,
			}})
			if err != nil {
				return err
			}
			_, err = r.Patch(ctx, u.GetName(), types.MergePatchType, patch, metav1.PatchOptions{}, "status")
			return err
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fake := generictest.New(t, widget.NewScheme(), generictest.Timeout(noOpTimeout),
				generictest.Files("../testdata/crds/widgets.example.com.yaml", "../testdata/widgets.yaml"))
			widgets := generictest.NewUnstructuredInformer(fake, widget.GVR)
			controller := &statusWriter{resource: fake.Dynamic().Resource(widget.GVR), write: tc.write}
			rec := generictest.NewRecorder[*unstructured.Unstructured]()
			for _, h := range []cache.TypedResourceEventHandler[*unstructured.Unstructured]{controller, rec} {
				if _, err := widgets.AddEventHandler(h); err != nil {
					t.Fatal(err)
				}
			}
			fake.WaitIdle(alwaysIdle{})
			rec.Reset()

			fake.UpdateStatus(&widget.Widget{
				ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "small", Labels: map[string]string{"size": "small"}},
				Spec:       widget.Spec{Size: 1, Color: "blue", ConfigMapName: "settings"},
				Status:     widget.Status{Ready: true},
			})
			fake.WaitIdle(alwaysIdle{})

			controller.mu.Lock()
			errs, writes := controller.errs, controller.writes
			controller.mu.Unlock()
			if len(errs) > 0 {
				t.Errorf("the controller's writes failed: %v", errs)
			}
			// One write for each Widget listed, one for the status update.
			seeded, err := widgets.Lister().List(labels.Everything())
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(len(seeded)+1, writes); diff != "" {
				t.Errorf("writes of the controller (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]generictest.Event{{Verb: generictest.Modified, Key: "team-a/small"}}, rec.Events(), generictest.IgnoreResourceVersion()); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}
