package ctrlcache

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestConsistencyHandlerIsRecognised pins what progress.go relies on in
// controller-runtime: the handler its consistent client
// (EnableReadYourWritesConsistency) adds to a cache's informer is of the
// type isConsistencyHandler recognises, and told a resourceVersion by
// progressRegistration.feed (an OnUpdate of a marker at it), it lets a
// Get wait for a write at that resourceVersion end. If controller-runtime
// renames the type or changes what its OnUpdate reads, this fails, and
// writes outside an informer's selection would wait for events that never
// come again (e2e/ctrlcache TestReadYourWritesOutsideSelection).
//
// The handler is taken from controller-runtime's own client: the cache
// the client is given here only hands it an informer that records the
// handler added to it (no server is needed: the client's List registers
// the handler and reads the cache).
func TestConsistencyHandlerIsRecognised(t *testing.T) {
	handler := consistencyHandlerOf(t)
	tests := []struct {
		name    string
		handler toolscache.ResourceEventHandler
		want    bool
	}{
		{name: "controller-runtime's", handler: handler, want: true},
		{name: "ResourceEventHandlerFuncs", handler: toolscache.ResourceEventHandlerFuncs{}},
		{name: "a pointer to another struct", handler: &toolscache.ResourceEventHandlerFuncs{}},
		{name: "controller-runtime's, wrapped", handler: toolscache.FilteringResourceEventHandler{Handler: handler}},
		{name: "nil"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, isConsistencyHandler(tc.handler)); diff != "" {
				t.Errorf("isConsistencyHandler(%T) (-want +got):\n%s", tc.handler, diff)
			}
		})
	}

	waits, ok := handler.(interface {
		SetMinimumRV(key types.NamespacedName, rv int64)
		WaitForGet(ctx context.Context, key types.NamespacedName) error
	})
	if !ok {
		t.Fatalf("controller-runtime's %T has no SetMinimumRV and WaitForGet", handler)
	}
	key := types.NamespacedName{Namespace: "ns", Name: "written"}
	waits.SetMinimumRV(key, 7)
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	if err := waits.WaitForGet(cancelled, key); err == nil {
		t.Fatal("WaitForGet of a write at resourceVersion 7 before any was observed: nil error, want it to wait")
	}
	reg := &progressRegistration{handler: handler, applied: func() string { return "7" }}
	reg.feed()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := waits.WaitForGet(ctx, key); err != nil {
		t.Fatalf("WaitForGet of a write at resourceVersion 7 after the store's resourceVersion 7 was fed: %v", err)
	}
}

// consistencyHandlerOf returns the handler controller-runtime's consistent
// client adds to the informer of ConfigMaps.
func consistencyHandlerOf(t *testing.T) toolscache.ResourceEventHandler {
	t.Helper()
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(corev1.SchemeGroupVersion.WithKind("ConfigMap"), meta.RESTScopeNamespace)
	recorder := &handlerRecorder{}
	cl, err := client.New(&rest.Config{Host: "http://127.0.0.1:1"}, client.Options{
		Mapper: mapper,
		Cache:  &client.CacheOptions{Reader: recorder, EnableReadYourWritesConsistency: ptr.To(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := cl.List(ctx, &corev1.ConfigMapList{}); err != nil {
		t.Fatal(err)
	}
	recorder.mu.Lock()
	defer recorder.mu.Unlock()
	if len(recorder.handlers) != 1 {
		t.Fatalf("the consistent client added %d handlers, want 1", len(recorder.handlers))
	}
	return recorder.handlers[0]
}

// handlerRecorder is a cache that reads nothing and whose informers record
// the handlers added to them and are synced.
type handlerRecorder struct {
	crcache.Cache
	mu       sync.Mutex
	handlers []toolscache.ResourceEventHandler
}

func (r *handlerRecorder) GetInformer(context.Context, client.Object, ...crcache.InformerGetOption) (crcache.Informer, error) {
	return recordingInformer{r}, nil
}

func (r *handlerRecorder) List(context.Context, client.ObjectList, ...client.ListOption) error {
	return nil
}

type recordingInformer struct {
	*handlerRecorder
}

func (i recordingInformer) AddEventHandler(handler toolscache.ResourceEventHandler) (toolscache.ResourceEventHandlerRegistration, error) {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.handlers = append(i.handlers, handler)
	return synced{}, nil
}

func (i recordingInformer) AddEventHandlerWithResyncPeriod(handler toolscache.ResourceEventHandler, _ time.Duration) (toolscache.ResourceEventHandlerRegistration, error) {
	return i.AddEventHandler(handler)
}

func (i recordingInformer) AddEventHandlerWithOptions(handler toolscache.ResourceEventHandler, _ toolscache.HandlerOptions) (toolscache.ResourceEventHandlerRegistration, error) {
	return i.AddEventHandler(handler)
}

func (recordingInformer) RemoveEventHandler(toolscache.ResourceEventHandlerRegistration) error {
	return nil
}

func (recordingInformer) AddIndexers(toolscache.Indexers) error { return nil }

func (recordingInformer) HasSynced() bool { return true }

func (recordingInformer) HasSyncedChecker() toolscache.DoneChecker { return synced{} }

func (recordingInformer) IsStopped() bool { return false }

// synced is a handler registration that has synced.
type synced struct{}

var closed = func() chan struct{} {
	ch := make(chan struct{})
	close(ch)
	return ch
}()

func (synced) HasSynced() bool                          { return true }
func (synced) HasSyncedChecker() toolscache.DoneChecker { return synced{} }
func (synced) Name() string                             { return "synced" }
func (synced) Done() <-chan struct{}                    { return closed }

// TestOldestApplied: the resourceVersion every store of a cache's
// namespaces has reached is the numerically smallest, and there is none
// while one store has none or one that is not a decimal integer.
func TestOldestApplied(t *testing.T) {
	tests := []struct {
		name string
		rvs  []string
		want string
	}{
		{name: "one", rvs: []string{"7"}, want: "7"},
		{name: "numerically, not as strings", rvs: []string{"10", "9"}, want: "9"},
		{name: "one store has none yet", rvs: []string{"10", ""}, want: ""},
		{name: "not a decimal integer", rvs: []string{"10", "a1"}, want: ""},
		{name: "none", rvs: nil, want: ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var sources []func() string
			for _, rv := range tc.rvs {
				sources = append(sources, func() string { return rv })
			}
			if diff := cmp.Diff(tc.want, oldestApplied(sources)); diff != "" {
				t.Errorf("oldestApplied(%q) (-want +got):\n%s", tc.rvs, diff)
			}
		})
	}
}
