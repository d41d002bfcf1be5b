package integration

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/e2e/apiserver"
	"github.com/generic-informers/generic/e2e/internal/cluster"
	"github.com/generic-informers/generic/internal/fixtures"
	"github.com/generic-informers/generic/internal/widget"
)

// testdata is the library's fixture folder.
const testdata = "../../testdata"

func newCluster(t testing.TB, server *apiserver.Server) *cluster.Cluster {
	t.Helper()
	c, err := cluster.New(server.Config)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// load reads fixtures, moving objects of namespace team-a and team-b into
// <prefix>-a and <prefix>-b, so that each test has namespaces of its own,
// and labelling every object with the prefix (testLabel), so that a test
// watching all namespaces can select its own objects (ownObjects).
func load(t testing.TB, prefix string, files ...string) []*unstructured.Unstructured {
	t.Helper()
	paths := make([]string, len(files))
	for i, file := range files {
		paths[i] = filepath.Join(testdata, file)
	}
	objs, err := fixtures.Load(paths...)
	if err != nil {
		t.Fatal(err)
	}
	for _, obj := range objs {
		if ns := obj.GetNamespace(); strings.HasPrefix(ns, "team-") {
			obj.SetNamespace(prefix + strings.TrimPrefix(ns, "team"))
		}
		if obj.GetKind() != "CustomResourceDefinition" {
			objLabels := obj.GetLabels()
			if objLabels == nil {
				objLabels = map[string]string{}
			}
			objLabels[testLabel] = prefix
			obj.SetLabels(objLabels)
		}
	}
	return objs
}

// testLabel marks the objects of one test.
const testLabel = "e2e-test"

// ownObjects limits an informer to the objects load labelled with prefix.
func ownObjects(prefix string) generic.InformerOption {
	return generic.WithLabelSelector(testLabel + "=" + prefix)
}

// namespaces returns the Namespace objects <prefix>-a and <prefix>-b.
func namespaces(prefix string) []*unstructured.Unstructured {
	var objs []*unstructured.Unstructured
	for _, suffix := range []string{"-a", "-b"} {
		objs = append(objs, cluster.Namespace(prefix+suffix))
	}
	return objs
}

// apply applies objs to the cluster, failing the test on error.
func apply(t testing.TB, c *cluster.Cluster, objs ...*unstructured.Unstructured) {
	t.Helper()
	if err := c.Apply(context.Background(), objs...); err != nil {
		t.Fatal(err)
	}
}

// testContext ends a little before the test's deadline, or after two minutes.
func testContext(t *testing.T) context.Context {
	deadline, ok := t.Deadline()
	if !ok {
		deadline = time.Now().Add(2 * time.Minute)
	}
	ctx, cancel := context.WithDeadline(context.Background(), deadline.Add(-10*time.Second))
	t.Cleanup(cancel)
	return ctx
}

// syncAll starts a factory-like thing and fails the test unless every
// started informer syncs.
func syncAll(t *testing.T, start func(context.Context), wait func(context.Context) generic.SyncResult) {
	t.Helper()
	start(context.Background())
	if err := wait(testContext(t)).AsError(); err != nil {
		t.Fatal(err)
	}
}

// dynamicFactory is the generic core's factory of *unstructured.Unstructured
// over client-go's dynamic client, shut down with the test.
func dynamicFactory(t *testing.T, client dynamic.Interface, opts ...generic.FactoryOption) *generic.Factory[*unstructured.Unstructured] {
	t.Helper()
	factory, err := generic.NewFactory[*unstructured.Unstructured](generic.DynamicSource(client), nil, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(factory.Shutdown)
	return factory
}

// acquire is factory.Acquire, failing the test on an error.
func acquire[T generic.Object](t *testing.T, factory *generic.Factory[T], gvr schema.GroupVersionResource, opts ...generic.InformerOption) generic.Handle[T] {
	t.Helper()
	handle, err := factory.Acquire(gvr, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return handle
}

// event is what a handler saw, in a form cmp.Diff can compare.
type event struct {
	Verb      string
	Key       string
	Tombstone bool
	// State is a label of the object's state the test cares about; on a
	// delete, of its last known state.
	State string
}

// recorder is a typed event handler that hands what it sees to the test.
type recorder[T generic.Object] struct {
	events chan event
	state  func(T) string
}

func newRecorder[T generic.Object](state func(T) string) *recorder[T] {
	return &recorder[T]{events: make(chan event, 10000), state: state}
}

func keyOf(obj any) string {
	key, _ := cache.MetaNamespaceKeyFunc(obj)
	return key
}

func (r *recorder[T]) OnAdd(obj T, _ bool) {
	r.events <- event{Verb: "ADDED", Key: keyOf(obj), State: r.state(obj)}
}

func (r *recorder[T]) OnUpdate(_, obj T) {
	r.events <- event{Verb: "MODIFIED", Key: keyOf(obj), State: r.state(obj)}
}

func (r *recorder[T]) OnDelete(deleted cache.DeletedObject[T]) {
	var zero T
	e := event{Verb: "DELETED", Key: deleted.GetKey(), Tombstone: deleted.FinalStateUnknown != nil}
	if deleted.OptionalObj != zero {
		e.State = r.state(deleted.OptionalObj)
	}
	r.events <- e
}

// next returns the next n events, sorted by key then verb, failing the test
// if they do not come in time.
func (r *recorder[T]) next(t *testing.T, n int) []event {
	t.Helper()
	ctx := testContext(t)
	got := make([]event, 0, n)
	for len(got) < n {
		select {
		case e := <-r.events:
			got = append(got, e)
		case <-ctx.Done():
			t.Fatalf("got %d of %d events in time: %+v", len(got), n, got)
		}
	}
	slices.SortFunc(got, func(a, b event) int {
		if c := strings.Compare(a.Key, b.Key); c != 0 {
			return c
		}
		return strings.Compare(a.Verb, b.Verb)
	})
	return got
}

func keys[T metav1.Object](objs []T) []string {
	ret := make([]string, 0, len(objs))
	for _, obj := range objs {
		ret = append(ret, keyOf(obj))
	}
	slices.Sort(ret)
	return ret
}

// contentTypes records the Content-Type of every response a rest.Config
// receives, by URL path.
type contentTypes struct {
	mu     sync.Mutex
	byPath map[string][]string
}

func recordContentTypes(config *rest.Config) (*rest.Config, *contentTypes) {
	rec := &contentTypes{byPath: map[string][]string{}}
	config = rest.CopyConfig(config)
	config.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
			resp, err := rt.RoundTrip(req)
			if err == nil {
				kind := "list"
				if req.URL.Query().Get("watch") == "true" {
					kind = "watch"
				}
				rec.mu.Lock()
				rec.byPath[req.URL.Path] = appendUnique(rec.byPath[req.URL.Path], kind+" "+resp.Header.Get("Content-Type"))
				rec.mu.Unlock()
			}
			return resp, err
		})
	})
	return config, rec
}

func (c *contentTypes) of(path string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	got := slices.Clone(c.byPath[path])
	slices.Sort(got)
	return got
}

func appendUnique(s []string, v string) []string {
	if slices.Contains(s, v) {
		return s
	}
	return append(s, v)
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

func configMapColor(cm *corev1.ConfigMap) string { return cm.Data["color"] }

func widgetState(w *widget.Widget) string { return fmt.Sprintf("size=%d", w.Spec.Size) }

func unstructuredSize(u *unstructured.Unstructured) string {
	size, found, err := unstructured.NestedFieldNoCopy(u.Object, "spec", "size")
	if err != nil || !found {
		return ""
	}
	return fmt.Sprintf("size=%v", size)
}

var configMapsGVR = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

// stateLog records the states a generic.StateHandler is told of.
type stateLog struct {
	mu  sync.Mutex
	log []generic.State
}

func (l *stateLog) record(s generic.Status) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.log = append(l.log, s.State)
}

// heard waits until the StateHandler has been told of n changes and
// returns them. The handler runs on a goroutine of its own (the
// informer's callbacks goroutine), so Status can show a change before the
// handler hears of it.
func (l *stateLog) heard(t *testing.T, n int) []generic.State {
	t.Helper()
	ctx := testContext(t)
	for len(l.states()) < n {
		select {
		case <-ctx.Done():
			t.Fatalf("the StateHandler heard %v, want %d changes", l.states(), n)
		case <-time.After(20 * time.Millisecond):
		}
	}
	return l.states()
}

func (l *stateLog) states() []generic.State {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.log)
}

// waitForState waits until the informer reports want.
func waitForState[T generic.Object](t *testing.T, informer generic.Informer[T], want generic.State) {
	t.Helper()
	ctx := testContext(t)
	for informer.Status().State != want {
		select {
		case <-ctx.Done():
			t.Fatalf("state %v, want %v (last error %v)", informer.Status().State, want, informer.Status().LastError)
		case <-time.After(20 * time.Millisecond):
		}
	}
}
