package generictest_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/cache"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/generictest"
)

// marker is the controller under test: a handler on ConfigMaps that, for
// each ConfigMap labelled mark=please, makes one write through the typed
// clientset, which marks it done (or creates or deletes).
type marker struct {
	client kubernetes.Interface
	write  func(context.Context, kubernetes.Interface, *corev1.ConfigMap) error

	mu   sync.Mutex
	errs []error
}

func (m *marker) OnAdd(cm *corev1.ConfigMap, _ bool)              { m.reconcile(cm) }
func (m *marker) OnUpdate(_, cm *corev1.ConfigMap)                { m.reconcile(cm) }
func (m *marker) OnDelete(cache.DeletedObject[*corev1.ConfigMap]) {}

func (m *marker) reconcile(cm *corev1.ConfigMap) {
	if cm.Labels["mark"] != "please" {
		return
	}
	if err := m.write(context.Background(), m.client, cm); err != nil {
		m.mu.Lock()
		defer m.mu.Unlock()
		m.errs = append(m.errs, fmt.Errorf("%s/%s: %w", cm.Namespace, cm.Name, err))
	}
}

func (m *marker) errors() []error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.errs)
}

// markedDone is the patch that marks a ConfigMap done.
const markedDone = `{"metadata":{"labels":{"mark":"done"}}}`

// pleaseMark is the ConfigMap the tests create for the controller.
func pleaseMark() *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "new", Labels: map[string]string{"mark": "please"}},
		Data:       map[string]string{"a": "1"},
	}
}

// markAndData shows, of each ConfigMap, its mark label and its data.
func markAndData(cms []*corev1.ConfigMap) []string {
	var shown []string
	for _, cm := range cms {
		shown = append(shown, fmt.Sprintf("%s/%s mark=%s data=%v", cm.Namespace, cm.Name, cm.Labels["mark"], cm.Data))
	}
	return shown
}

// TestControllerWritesThroughClientset runs a controller that writes
// through the typed clientset, with each verb: its write reaches the
// Fake's informers and handlers, stamped with a new resourceVersion, and
// the Fake's change that set it off returns as usual.
func TestControllerWritesThroughClientset(t *testing.T) {
	tests := []struct {
		name  string
		write func(context.Context, kubernetes.Interface, *corev1.ConfigMap) error
		// want is the cache, as markAndData shows it.
		want []string
		// wantEvents are what a Recorder on the informer receives.
		wantEvents []generictest.Event
	}{{
		name: "update",
		write: func(ctx context.Context, c kubernetes.Interface, cm *corev1.ConfigMap) error {
			cm = cm.DeepCopy() // the informer's object is read-only
			cm.Labels["mark"] = "done"
			_, err := c.CoreV1().ConfigMaps(cm.Namespace).Update(ctx, cm, metav1.UpdateOptions{})
			return err
		},
		want:       []string{"team-a/new mark=done data=map[a:1]"},
		wantEvents: []generictest.Event{{Verb: generictest.Added, Key: "team-a/new"}, {Verb: generictest.Modified, Key: "team-a/new"}},
	}, {
		name: "merge patch",
		write: func(ctx context.Context, c kubernetes.Interface, cm *corev1.ConfigMap) error {
			_, err := c.CoreV1().ConfigMaps(cm.Namespace).Patch(ctx, cm.Name, types.MergePatchType, []byte(markedDone), metav1.PatchOptions{})
			return err
		},
		want:       []string{"team-a/new mark=done data=map[a:1]"},
		wantEvents: []generictest.Event{{Verb: generictest.Added, Key: "team-a/new"}, {Verb: generictest.Modified, Key: "team-a/new"}},
	}, {
		name: "strategic merge patch",
		write: func(ctx context.Context, c kubernetes.Interface, cm *corev1.ConfigMap) error {
			patch := `{"metadata":{"labels":{"mark":"done"}},"data":{"b":"2"}}`
			_, err := c.CoreV1().ConfigMaps(cm.Namespace).Patch(ctx, cm.Name, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{})
			return err
		},
		want:       []string{"team-a/new mark=done data=map[a:1 b:2]"},
		wantEvents: []generictest.Event{{Verb: generictest.Added, Key: "team-a/new"}, {Verb: generictest.Modified, Key: "team-a/new"}},
	}, {
		name: "server-side apply",
		write: func(ctx context.Context, c kubernetes.Interface, cm *corev1.ConfigMap) error {
			applied := corev1ac.ConfigMap(cm.Name, cm.Namespace).WithLabels(map[string]string{"mark": "done"})
			_, err := c.CoreV1().ConfigMaps(cm.Namespace).Apply(ctx, applied, metav1.ApplyOptions{FieldManager: "marker", Force: true})
			return err
		},
		want:       []string{"team-a/new mark=done data=map[a:1]"},
		wantEvents: []generictest.Event{{Verb: generictest.Added, Key: "team-a/new"}, {Verb: generictest.Modified, Key: "team-a/new"}},
	}, {
		name: "create",
		write: func(ctx context.Context, c kubernetes.Interface, cm *corev1.ConfigMap) error {
			marked := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
				Namespace: cm.Namespace, Name: cm.Name + "-marked", Labels: map[string]string{"mark": "done"},
			}}
			_, err := c.CoreV1().ConfigMaps(cm.Namespace).Create(ctx, marked, metav1.CreateOptions{})
			if apierrors.IsAlreadyExists(err) {
				return nil
			}
			return err
		},
		want:       []string{"team-a/new mark=please data=map[a:1]", "team-a/new-marked mark=done data=map[]"},
		wantEvents: []generictest.Event{{Verb: generictest.Added, Key: "team-a/new"}, {Verb: generictest.Added, Key: "team-a/new-marked"}},
	}, {
		name: "delete",
		write: func(ctx context.Context, c kubernetes.Interface, cm *corev1.ConfigMap) error {
			return c.CoreV1().ConfigMaps(cm.Namespace).Delete(ctx, cm.Name, metav1.DeleteOptions{})
		},
		want:       nil,
		wantEvents: []generictest.Event{{Verb: generictest.Added, Key: "team-a/new"}, {Verb: generictest.Deleted, Key: "team-a/new"}},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fake := generictest.New(t, scheme.Scheme)
			configMaps := generictest.NewInformer[*corev1.ConfigMap](fake)
			controller := &marker{client: fake.Clientset(), write: tc.write}
			rec := generictest.NewRecorder[*corev1.ConfigMap]()
			for _, h := range []cache.TypedResourceEventHandler[*corev1.ConfigMap]{controller, rec} {
				if _, err := configMaps.AddEventHandler(h); err != nil {
					t.Fatal(err)
				}
			}

			fake.Create(pleaseMark())

			generictest.WaitForState(configMaps, tc.want, markAndData)
			if errs := controller.errors(); len(errs) > 0 {
				t.Errorf("the controller's writes failed: %v", errs)
			}
			events := rec.Events()
			if diff := cmp.Diff(tc.wantEvents, events, generictest.IgnoreResourceVersion()); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			if err := stampedInOrder(events); err != nil {
				t.Error(err)
			}
		})
	}
}

// stampedInOrder checks that each event but a delete's carries a
// resourceVersion the Fake stamped, greater than the one before it.
func stampedInOrder(events []generictest.Event) error {
	last := int64(0)
	for _, e := range events {
		if e.Verb == generictest.Deleted {
			continue
		}
		rv, err := strconv.ParseInt(e.ResourceVersion, 10, 64)
		if err != nil || rv <= last {
			return fmt.Errorf("%s %s at resourceVersion %q, after %d: want a new, greater one", e.Verb, e.Key, e.ResourceVersion, last)
		}
		last = rv
	}
	return nil
}

// TestClientsetChanges makes changes through the typed clientset, and finds
// them where the Fake's own would be: in the cache and handlers, filtered by
// the Fake's label selector, cut by WithoutWatch.
func TestClientsetChanges(t *testing.T) {
	settings := func(app string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "settings", Labels: map[string]string{"app": app}}}
	}
	tests := []struct {
		name    string
		options []generictest.Option
		change  func(t *testing.T, f *generictest.Fake, c kubernetes.Interface)
		// want are the keys the cache ends with.
		want       []string
		wantEvents []generictest.Event
	}{{
		name: "create",
		change: func(t *testing.T, _ *generictest.Fake, c kubernetes.Interface) {
			created := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "new"}}
			if _, err := c.CoreV1().ConfigMaps("team-a").Create(context.Background(), created, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		},
		want:       []string{"team-a/flags", "team-a/new", "team-a/settings", "team-b/settings"},
		wantEvents: []generictest.Event{{Verb: generictest.Added, Key: "team-a/new"}},
	}, {
		name:    "an update out of the label selector is a delete",
		options: []generictest.Option{generictest.FactoryOptions(generic.WithLabelSelector("app=web"))},
		change: func(t *testing.T, _ *generictest.Fake, c kubernetes.Interface) {
			if _, err := c.CoreV1().ConfigMaps("team-a").Update(context.Background(), settings("db"), metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
		},
		want:       []string{"team-b/settings"},
		wantEvents: []generictest.Event{{Verb: generictest.Deleted, Key: "team-a/settings"}},
	}, {
		name:    "a delete missed by the watch arrives as a tombstone",
		options: []generictest.Option{generictest.FactoryOptions(generic.WithNamespace("team-a"))},
		change: func(t *testing.T, f *generictest.Fake, c kubernetes.Interface) {
			f.WithoutWatch(func() {
				if err := c.CoreV1().ConfigMaps("team-a").Delete(context.Background(), "settings", metav1.DeleteOptions{}); err != nil {
					t.Fatal(err)
				}
			})
		},
		want: []string{"team-a/flags"},
		// The relist also tells handlers of every object still there.
		wantEvents: []generictest.Event{
			{Verb: generictest.Deleted, Key: "team-a/settings", Tombstone: true},
			{Verb: generictest.Modified, Key: "team-a/flags"},
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fake := generictest.New(t, scheme.Scheme, append(tc.options, generictest.Files("../testdata/configmaps.yaml"))...)
			configMaps := generictest.NewInformer[*corev1.ConfigMap](fake)
			rec := generictest.NewRecorder[*corev1.ConfigMap]()
			if _, err := configMaps.AddEventHandler(rec); err != nil {
				t.Fatal(err)
			}
			rec.Reset() // the cached objects, replayed to a new handler

			tc.change(t, fake, fake.Clientset())

			generictest.WaitForState(configMaps, tc.want, keysOf)
			if diff := cmp.Diff(tc.wantEvents, rec.Events(), generictest.IgnoreResourceVersion(), generictest.IgnoreOrder()); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}

func keysOf(cms []*corev1.ConfigMap) []string {
	var keys []string
	for _, cm := range cms {
		keys = append(keys, cm.Namespace+"/"+cm.Name)
	}
	return keys
}

// TestClientsetReads reads through the typed clientset what the fixtures
// seeded and the Fake wrote: one store, whichever client.
func TestClientsetReads(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name string
		read func(f *generictest.Fake, c kubernetes.Interface) (any, error)
		want any
		// wantErr tells the error expected.
		wantErr func(error) bool
	}{{
		name: "get a seeded object",
		read: func(_ *generictest.Fake, c kubernetes.Interface) (any, error) {
			cm, err := c.CoreV1().ConfigMaps("team-a").Get(ctx, "settings", metav1.GetOptions{})
			return cm.Data, err
		},
		want: map[string]string{"color": "blue"},
	}, {
		name: "list by label",
		read: func(_ *generictest.Fake, c kubernetes.Interface) (any, error) {
			list, err := c.CoreV1().ConfigMaps("").List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
			if err != nil {
				return nil, err
			}
			var keys []string
			for _, cm := range list.Items {
				keys = append(keys, cm.Namespace+"/"+cm.Name)
			}
			slices.Sort(keys)
			return keys, nil
		},
		want: []string{"team-a/settings", "team-b/settings"},
	}, {
		name: "get what the Fake created, with its resourceVersion",
		read: func(f *generictest.Fake, c kubernetes.Interface) (any, error) {
			created := f.Create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "team-b", Name: "new"}})
			cm, err := c.CoreV1().ConfigMaps("team-b").Get(ctx, "new", metav1.GetOptions{})
			return cm.ResourceVersion == created.GetResourceVersion(), err
		},
		want: true,
	}, {
		name: "get a missing object",
		read: func(_ *generictest.Fake, c kubernetes.Interface) (any, error) {
			_, err := c.CoreV1().ConfigMaps("team-a").Get(ctx, "missing", metav1.GetOptions{})
			return nil, err
		},
		wantErr: apierrors.IsNotFound,
	}, {
		name: "a watch delivers the clientset's Go types",
		read: func(f *generictest.Fake, c kubernetes.Interface) (any, error) {
			w, err := c.CoreV1().ConfigMaps("team-b").Watch(ctx, metav1.ListOptions{ResourceVersion: "0"})
			if err != nil {
				return nil, err
			}
			defer w.Stop()
			f.Create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "team-b", Name: "new"}})
			return nextEvent(w, "team-b/new")
		},
		want: "ADDED *v1.ConfigMap team-b/new",
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fake := generictest.New(t, scheme.Scheme, generictest.Files("../testdata/configmaps.yaml"))
			got, err := tc.read(fake, fake.Clientset())
			if tc.wantErr != nil {
				if !tc.wantErr(err) {
					t.Fatalf("error %v, want another", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("read (-want +got):\n%s", diff)
			}
		})
	}
}

// nextEvent describes the first event of w of key, waiting at most ten
// seconds.
func nextEvent(w watch.Interface, key string) (string, error) {
	timeout := time.After(10 * time.Second)
	for {
		select {
		case e, ok := <-w.ResultChan():
			if !ok {
				return "", fmt.Errorf("the watch ended before an event of %s", key)
			}
			if cm, isCM := e.Object.(*corev1.ConfigMap); !isCM || cm.Namespace+"/"+cm.Name == key {
				return fmt.Sprintf("%s %T %s", e.Type, e.Object, key), nil
			}
		case <-timeout:
			return "", fmt.Errorf("no event of %s in 10s", key)
		}
	}
}
