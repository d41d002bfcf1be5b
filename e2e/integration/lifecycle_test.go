package integration

import (
	"context"
	"errors"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/e2e/apiserver"
	"github.com/generic-informers/generic/internal/widget"
	"github.com/generic-informers/generic/typed"
)

// requestLog counts the requests a rest.Config sends, by path.
type requestLog struct {
	mu     sync.Mutex
	byPath map[string]int
}

func logRequests(config *rest.Config) (*rest.Config, *requestLog) {
	log := &requestLog{byPath: map[string]int{}}
	config = rest.CopyConfig(config)
	config.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
			log.mu.Lock()
			log.byPath[req.URL.Path]++
			log.mu.Unlock()
			return rt.RoundTrip(req)
		})
	})
	return config, log
}

func (l *requestLog) count(path string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.byPath[path]
}

// TestCRDDeletedAndRecreated deletes the Widget CRD under a running
// informer: the handlers get a delete for every Widget, the state becomes
// NotServed, and the informer sends only a handful of requests while the
// resource is gone. Re-created with a new field and new Widgets, the
// resource is served again: the informer relists by itself and is Synced.
func TestCRDDeletedAndRecreated(t *testing.T) {
	server := apiserver.StartForTest(t) // the CRD comes and goes: a server of its own
	c := newCluster(t, server)
	apply(t, c, namespaces("crd")...)
	apply(t, c, load(t, "crd", "crds/widgets.example.com.yaml", "widgets.yaml")...)

	config, requests := logRequests(server.Config)
	var states stateLog
	factory := dynamicFactory(t, dynamic.NewForConfigOrDie(config), generic.WithStateHandler(states.record))
	informer := acquire(t, factory, widget.GVR)
	rec := newRecorder(unstructuredSize)
	if _, err := informer.AddEventHandler(rec); err != nil {
		t.Fatal(err)
	}
	syncAll(t, factory.Start, factory.WaitForCacheSync)
	rec.next(t, 3)

	ctx := testContext(t)
	if err := c.DeleteCRD(ctx, "widgets.example.com"); err != nil {
		t.Fatal(err)
	}
	deleted := rec.next(t, 3)
	for i := range deleted {
		deleted[i].Tombstone = false // seen as events or, if the watch closed first, as tombstones
	}
	if diff := cmp.Diff([]event{
		{Verb: "DELETED", Key: "crd-a/large", State: "size=10"},
		{Verb: "DELETED", Key: "crd-a/small", State: "size=1"},
		{Verb: "DELETED", Key: "crd-b/small", State: "size=2"},
	}, deleted); diff != "" {
		t.Errorf("deletes (-want +got):\n%s", diff)
	}
	waitForState(t, informer, generic.NotServed)
	if !apierrors.IsNotFound(informer.Status().LastError) {
		t.Errorf("last error %v, want a NotFound", informer.Status().LastError)
	}

	// Not served for 30 s: the probes back off (1 s, 2 s, 4 s, 8 s, ...),
	// five requests at most, however long the sleep overran.
	path := "/apis/example.com/v1/widgets"
	before, started := requests.count(path), time.Now()
	time.Sleep(30 * time.Second)
	sent, window := requests.count(path)-before, time.Since(started)
	t.Logf("%d requests for widgets in the %v it was not served", sent, window)
	if limit := notServedProbesWithin(window); sent > limit {
		t.Errorf("%d requests in %v while not served, want at most %d", sent, window, limit)
	}

	apply(t, c, load(t, "crd", "crds/widgets.example.com-v2.yaml", "widgets-v2.yaml")...)
	if diff := cmp.Diff([]event{
		{Verb: "ADDED", Key: "crd-a/heavy", State: "size=4"},
		{Verb: "ADDED", Key: "crd-b/light", State: "size=2"},
	}, rec.next(t, 2)); diff != "" {
		t.Errorf("events when served again (-want +got):\n%s", diff)
	}
	waitForState(t, informer, generic.Synced)
	heavy, err := informer.Lister().Namespace("crd-a").Get("heavy")
	if err != nil {
		t.Fatal(err)
	}
	weight, _, _ := unstructured.NestedInt64(heavy.Object, "spec", "weight")
	if diff := cmp.Diff(int64(90), weight); diff != "" {
		t.Errorf("new field (-want +got):\n%s", diff)
	}
	wantStates := []generic.State{generic.Syncing, generic.Synced, generic.NotServed, generic.Synced}
	if diff := cmp.Diff(wantStates, states.heard(t, len(wantStates))); diff != "" {
		t.Errorf("state changes (-want +got):\n%s", diff)
	}
}

// TestForbiddenUser runs an informer as a user RBAC gives no permission:
// its state is Forbidden, and the error-returning wait says so.
func TestForbiddenUser(t *testing.T) {
	server := apiserver.StartForTest(t, "--authorization-mode=RBAC")
	c := newCluster(t, server)
	restricted := rest.CopyConfig(server.Config)
	restricted.Impersonate = rest.ImpersonationConfig{UserName: "restricted"}
	factory, err := typed.NewFactoryForClients(typed.Clients{Config: restricted, RESTMapper: c.Mapper}, widget.NewScheme())
	if err != nil {
		t.Fatal(err)
	}
	defer factory.Shutdown()
	configMaps, err := typed.InformerFor[*corev1.ConfigMap](factory)
	if err != nil {
		t.Fatal(err)
	}
	factory.Start(context.Background())
	// The bounded wait below must name the 403: first let the informer
	// have the answer to its first list, however loaded the machine.
	waitForState(t, configMaps, generic.Forbidden)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err = factory.WaitForCacheSync(ctx).AsError()

	var syncErr *generic.SyncError
	if !errors.As(err, &syncErr) || len(syncErr.Unsynced) != 1 {
		t.Fatalf("error = %v, want a *SyncError for configmaps", err)
	}
	if diff := cmp.Diff(generic.Forbidden, syncErr.Unsynced[0].State); diff != "" {
		t.Errorf("state in the error (-want +got):\n%s", diff)
	}
	for _, part := range []string{"/v1, Resource=configmaps: forbidden", `User "restricted" cannot list resource "configmaps"`} {
		if !strings.Contains(err.Error(), part) {
			t.Errorf("error %q does not say %q", err, part)
		}
	}
	if diff := cmp.Diff(generic.Forbidden, configMaps.Status().State); diff != "" {
		t.Errorf("informer state (-want +got):\n%s", diff)
	}
}

// TestAcquireRelease100Times acquires, syncs and releases the informer of
// one GVR 100 times against the real server: no goroutine is left, and the
// count of goroutines does not grow.
func TestAcquireRelease100Times(t *testing.T) {
	c := newCluster(t, shared)
	apply(t, c, namespaces("cycle")...)
	apply(t, c, load(t, "cycle", "configmaps.yaml")...)
	factory := dynamicFactory(t, c.Dynamic, generic.WithNamespace("cycle-a"))
	ctx := testContext(t)
	cycle := func() {
		informer := acquire(t, factory, configMapsGVR)
		factory.Start(ctx)
		if err := factory.WaitForCacheSync(ctx).AsError(); err != nil {
			t.Fatal(err)
		}
		if all, _ := informer.Lister().List(labels.Everything()); len(all) != 2 {
			t.Fatalf("cached %d ConfigMaps, want 2", len(all))
		}
		if !informer.Release() {
			t.Fatal("Release of the only hold returned false")
		}
	}
	cycle() // the client's connections are made once
	baseline := goleak.IgnoreCurrent()
	goroutines := runtime.NumGoroutine()
	for range 100 {
		cycle()
	}
	var err error
	_ = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		err = goleak.Find(baseline)
		return err == nil, nil
	})
	if err != nil {
		t.Errorf("goroutines left after 100 cycles: %v", err)
	}
	t.Logf("goroutines: %d before the 100 cycles, %d after", goroutines, runtime.NumGoroutine())
}
