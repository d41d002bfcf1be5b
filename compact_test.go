package generic_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/cache"

	"github.com/generic-informers/generic"
)

// compactReader is one informer of the compact store test and what its
// handlers were told.
type compactReader struct {
	handle generic.Handle[*corev1.ConfigMap]
	mu     sync.Mutex
	// events are "verb key rv" (update: "update key oldRV->newRV"), from
	// a typed handler and from a client-go handler on Informer().
	events, rawEvents []string
}

func (r *compactReader) record(list *[]string, event string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	*list = append(*list, event)
}

// recorded returns the events of each handler, sorted: the initial list
// comes in the order of a map.
func (r *compactReader) recorded() ([]string, []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Sorted(slices.Values(r.events)), slices.Sorted(slices.Values(r.rawEvents))
}

func eventOf(verb string, objs ...any) string {
	var rvs []string
	key := ""
	for _, obj := range objs {
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		cm, ok := obj.(*corev1.ConfigMap)
		if !ok {
			return fmt.Sprintf("%s of a %T", verb, obj)
		}
		key = cm.Namespace + "/" + cm.Name
		rvs = append(rvs, cm.ResourceVersion)
	}
	return fmt.Sprintf("%s %s %s", verb, key, strings.Join(rvs, "->"))
}

func startCompactReader(t *testing.T, ctx context.Context, server *shardServer, opts ...generic.InformerOption) *compactReader {
	t.Helper()
	factory := newFactory[*corev1.ConfigMap](server.Source, nil, asFactoryOptions(opts)...)
	t.Cleanup(factory.Shutdown)
	handle, err := factory.Acquire(configMapsGVR)
	if err != nil {
		t.Fatal(err)
	}
	r := &compactReader{handle: handle}
	_, err = handle.AddEventHandler(cache.TypedResourceEventHandlerFuncs[*corev1.ConfigMap]{
		AddFunc:    func(cm *corev1.ConfigMap) { r.record(&r.events, eventOf("add", cm)) },
		UpdateFunc: func(old, cm *corev1.ConfigMap) { r.record(&r.events, eventOf("update", old, cm)) },
		DeleteFunc: func(d cache.DeletedObject[*corev1.ConfigMap]) {
			r.record(&r.events, eventOf("delete", d.OptionalObj))
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	_, err = handle.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { r.record(&r.rawEvents, eventOf("add", obj)) },
		UpdateFunc: func(old, obj any) { r.record(&r.rawEvents, eventOf("update", old, obj)) },
		DeleteFunc: func(obj any) { r.record(&r.rawEvents, eventOf("delete", obj)) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := handle.AddIndexers(cache.TypedIndexers[*corev1.ConfigMap]{"mode": func(cm *corev1.ConfigMap) ([]string, error) {
		return []string{cm.Data["mode"]}, nil
	}}); err != nil {
		t.Fatal(err)
	}
	if err := handle.Informer().AddIndexers(cache.Indexers{"tier": func(obj any) ([]string, error) {
		cm, ok := obj.(*corev1.ConfigMap)
		if !ok {
			return nil, fmt.Errorf("a %T", obj)
		}
		return []string{cm.Labels["tier"]}, nil
	}}); err != nil {
		t.Fatal(err)
	}
	factory.Start(ctx)
	if err := factory.WaitForCacheSync(ctx).AsError(); err != nil {
		t.Fatal(err)
	}
	return r
}

// compactReads are the reads the test compares, each as the objects it
// returned (or its error).
func compactReads(r *compactReader) map[string]any {
	lister := r.handle.Lister()
	reads := map[string]any{}
	sorted := func(name string, cms []*corev1.ConfigMap, err error) {
		if err != nil {
			reads[name] = err.Error()
			return
		}
		reads[name] = generic.SortByNamespaceName(cms)
	}
	cms, err := lister.List(labels.Everything())
	sorted("List", cms, err)
	cms, err = lister.List(labels.SelectorFromSet(labels.Set{"tier": "front"}))
	sorted("List tier=front", cms, err)
	cms, err = lister.Namespace("other").List(labels.Everything())
	sorted("Namespace(other).List", cms, err)
	cms, err = lister.ByIndex("mode", "on")
	sorted("ByIndex mode=on", cms, err)
	cms, err = lister.Namespace("default").ByIndex("tier", "back")
	sorted("Namespace(default).ByIndex tier=back", cms, err)
	for _, name := range []string{"cm-3", "cm-4", "gone"} {
		cm, err := lister.Namespace("default").Get(name)
		if err != nil {
			reads["Get "+name] = err.Error()
		} else {
			reads["Get "+name] = cm
		}
	}
	var stored []*corev1.ConfigMap
	for _, obj := range r.handle.Informer().GetIndexer().List() {
		cm, ok := obj.(*corev1.ConfigMap)
		if !ok {
			reads["Informer().GetIndexer().List()"] = fmt.Sprintf("a %T", obj)
			return reads
		}
		stored = append(stored, cm)
	}
	reads["Informer().GetIndexer().List()"] = generic.SortByNamespaceName(stored)
	item, _, err := r.handle.Informer().GetStore().GetByKey("default/cm-3")
	reads["Informer().GetStore().GetByKey"] = fmt.Sprintf("%T %v", item, err)
	values, err := r.handle.Informer().GetIndexer().ByIndex("tier", "front")
	reads["Informer().GetIndexer().ByIndex tier=front"] = fmt.Sprintf("%d objects, %v", len(values), err)
	return reads
}

// TestCompactStoreReadsAsTheDefaultStore runs an informer with the default
// store beside informers with a compact store (keeping no, two and all
// decoded objects) over one server, through creates, updates and deletes,
// and requires every read and every handler's events to be the same.
func TestCompactStoreReadsAsTheDefaultStore(t *testing.T) {
	for _, decoded := range []int{0, 2, 1000} {
		t.Run(fmt.Sprintf("decoded=%d", decoded), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			server := newShardServer(true, false)
			seed := func(prefix string, from, to int, namespace string) {
				for i := from; i < to; i++ {
					server.apply("ADDED", &corev1.ConfigMap{
						ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: fmt.Sprintf("%s-%d", prefix, i), UID: server.newUID(),
							Labels: map[string]string{"tier": []string{"front", "back"}[i%2]}},
						Data: map[string]string{"mode": []string{"on", "off", "on"}[i%3], "payload": strings.Repeat("x", i)},
					})
				}
			}
			seed("cm", 0, 20, "default")
			seed("cm", 0, 5, "other")
			plain := startCompactReader(t, ctx, server)
			compact := startCompactReader(t, ctx, server, generic.WithCompactStore(decoded))

			seed("cm", 20, 30, "default")
			for _, name := range []string{"cm-3", "cm-21"} {
				server.mu.Lock()
				cm := server.objects["default/"+name].DeepCopy()
				server.mu.Unlock()
				cm.Data["mode"] = "off"
				cm.Labels["tier"] = "front"
				server.update(cm)
			}
			server.delete("cm-4")
			server.delete("cm-22")

			var diff string
			_ = wait.PollUntilContextCancel(ctx, 10*time.Millisecond, true, func(context.Context) (bool, error) {
				wantEvents, wantRaw := plain.recorded()
				gotEvents, gotRaw := compact.recorded()
				diff = cmp.Diff(map[string][]string{"typed": wantEvents, "client-go": wantRaw}, map[string][]string{"typed": gotEvents, "client-go": gotRaw})
				return diff == "" && len(wantEvents) == 39, nil
			})
			if diff != "" {
				t.Errorf("handler events (-default store +compact store):\n%s", diff)
			}
			if diff := cmp.Diff(compactReads(plain), compactReads(compact), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("reads (-default store +compact store):\n%s", diff)
			}
			stored := map[string][]string{"default": generic.StoredTypes(plain.handle), "compact": generic.StoredTypes(compact.handle)}
			if diff := cmp.Diff(map[string][]string{"default": {"*v1.ConfigMap"}, "compact": {"*compact.Record"}}, stored); diff != "" {
				t.Errorf("what the client-go stores hold (-want +got):\n%s", diff)
			}
			// Two reads of one object: the same object while it is kept
			// decoded, an equal copy once it is not.
			first, _ := compact.handle.Lister().Namespace("default").Get("cm-5")
			second, _ := compact.handle.Lister().Namespace("default").Get("cm-5")
			if same, want := first == second, decoded > 0; same != want {
				t.Errorf("two Gets of one object return the same pointer: %v, want %v", same, want)
			}
			if diff := cmp.Diff(first, second); diff != "" {
				t.Errorf("two Gets of one object differ:\n%s", diff)
			}
		})
	}
}

// interfaceObject is an interface T, as typed.Object is.
type interfaceObject interface {
	runtime.Object
	metav1.Object
}

// TestCompactStoreRefusals gives WithCompactStore where it cannot be
// honoured: the error names it, and nothing is made.
func TestCompactStoreRefusals(t *testing.T) {
	server := newShardServer(true, false)
	cases := []struct {
		name string
		make func() error
		want string
	}{
		{"a type with no protobuf encoding, to a factory", func() error {
			_, err := generic.NewFactory[*unstructured.Unstructured](server.Source, nil, generic.WithCompactStore(10))
			return err
		}, "generic: WithCompactStore(10): *unstructured.Unstructured has no protobuf encoding (Marshal and Unmarshal methods, as k8s.io/api's types have)"},
		{"a type with no protobuf encoding, to Acquire", func() error {
			factory := newFactory[*unstructured.Unstructured](server.Source, nil)
			defer factory.Shutdown()
			_, err := factory.Acquire(configMapsGVR, generic.WithCompactStore(10))
			return err
		}, "generic: WithCompactStore(10): *unstructured.Unstructured has no protobuf encoding (Marshal and Unmarshal methods, as k8s.io/api's types have)"},
		{"a type with no protobuf encoding, to NewInformer", func() error {
			_, err := generic.NewInformer[*unstructured.Unstructured](server.Source(configMapsGVR, "", nil), configMapsGVR, nil, generic.WithCompactStore(0))
			return err
		}, "generic: WithCompactStore(0): *unstructured.Unstructured has no protobuf encoding (Marshal and Unmarshal methods, as k8s.io/api's types have)"},
		{"a negative size", func() error {
			_, err := generic.NewFactory[*corev1.ConfigMap](server.Source, nil, generic.WithCompactStore(-1))
			return err
		}, "generic: WithCompactStore(-1): want 0 or more decoded objects"},
		{"an interface type without WithExampleObject, to a factory", func() error {
			factory := newFactory[interfaceObject](server.Source, nil, generic.WithCompactStore(10))
			defer factory.Shutdown()
			_, err := factory.Acquire(configMapsGVR)
			return err
		}, "generic: WithCompactStore(10): unexpected object type: generic_test.interfaceObject is not a pointer to a struct"},
		{"an interface type without WithExampleObject, to Acquire", func() error {
			factory := newFactory[interfaceObject](server.Source, nil)
			defer factory.Shutdown()
			_, err := factory.Acquire(configMapsGVR, generic.WithCompactStore(10))
			return err
		}, "generic: WithCompactStore(10): unexpected object type: generic_test.interfaceObject is not a pointer to a struct"},
		{"an interface type with an example of another type", func() error {
			factory := newFactory[interfaceObject](server.Source, nil)
			defer factory.Shutdown()
			_, err := factory.Acquire(configMapsGVR, generic.WithCompactStore(10), generic.WithExampleObject(&metav1.Status{}))
			return err
		}, "generic: WithCompactStore(10): unexpected object type: WithExampleObject's *v1.Status is not a generic_test.interfaceObject"},
		{"an example that is not a pointer to a struct", func() error {
			factory := newFactory[interfaceObject](server.Source, nil)
			defer factory.Shutdown()
			_, err := factory.Acquire(configMapsGVR, generic.WithExampleObject(nil))
			return err
		}, "generic: WithExampleObject(<nil>): want a pointer to a struct"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := "<nil>"
			if err := c.make(); err != nil {
				got = err.Error()
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
		})
	}
}
