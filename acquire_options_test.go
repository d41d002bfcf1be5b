package generic_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/generic-informers/generic"
)

// configMapsByColor indexes ConfigMaps by their data's color.
func configMapsByColor(obj any) ([]string, error) {
	if cm, ok := obj.(*corev1.ConfigMap); ok && cm.Data["color"] != "" {
		return []string{cm.Data["color"]}, nil
	}
	return nil, nil
}

// configMapsByName indexes ConfigMaps by name: another function.
func configMapsByName(obj any) ([]string, error) {
	if cm, ok := obj.(*corev1.ConfigMap); ok {
		return []string{cm.Name}, nil
	}
	return nil, nil
}

// dropData is a transform that drops a ConfigMap's data.
func dropData(obj any) (any, error) {
	if cm, ok := obj.(*corev1.ConfigMap); ok {
		cm.Data = nil
	}
	return obj, nil
}

// keepAll is another transform.
func keepAll(obj any) (any, error) { return obj, nil }

// transformDropping returns a transform, a closure made at each call.
func transformDropping(key string) cache.TransformFunc {
	return func(obj any) (any, error) {
		if cm, ok := obj.(*corev1.ConfigMap); ok {
			delete(cm.Data, key)
		}
		return obj, nil
	}
}

// silentProvider is a MetricsProvider that measures nothing.
type silentProvider struct{ name string }

func (*silentProvider) NewInformerMetrics(generic.InformerID, generic.InformerGauges) generic.InformerMetrics {
	return nil
}

func ignoreErrors(context.Context, error) {}

func ignoreStates(generic.Status) {}

// TestAcquireSharedOptions: an Acquire of a selection whose informer an
// earlier Acquire made is honoured (indexes it lacks are added to it) or
// refused with an *OptionConflictError naming the option and the
// informer's setting, and then takes no hold. Its options were dropped:
// the informer was shared "as it is", its ByIndex failed on the index
// asked for, and its objects were transformed by someone else.
func TestAcquireSharedOptions(t *testing.T) {
	timeout := int64(30)
	tweakTimeout := generic.WithTweakListOptions(func(o *metav1.ListOptions) { o.TimeoutSeconds = &timeout })
	name, err := cache.NewInformerName("TestAcquireSharedOptions")
	if err != nil {
		t.Fatal(err)
	}
	defer name.Release()
	provider := &silentProvider{name: "a"}
	tests := []struct {
		name          string
		first, second []generic.InformerOption
		// wantOption and wantCurrent are the refusal's; "" if the second
		// Acquire shares the informer.
		wantOption, wantCurrent string
	}{
		{name: "no options, twice"},
		{name: "an index the informer lacks, added",
			second: []generic.InformerOption{generic.WithIndexers(cache.Indexers{"byColor": configMapsByColor})}},
		{name: "the same index function again",
			first:  []generic.InformerOption{generic.WithIndexers(cache.Indexers{"byColor": configMapsByColor})},
			second: []generic.InformerOption{generic.WithIndexers(cache.Indexers{"byColor": configMapsByColor})}},
		{name: "an index of the same name, another function",
			first:      []generic.InformerOption{generic.WithIndexers(cache.Indexers{"byColor": configMapsByColor})},
			second:     []generic.InformerOption{generic.WithIndexers(cache.Indexers{"byColor": configMapsByName})},
			wantOption: `WithIndexers("byColor")`, wantCurrent: "func github.com/generic-informers/generic_test.configMapsByColor"},
		{name: "the same transform value again",
			first:  []generic.InformerOption{generic.WithTransform(dropData)},
			second: []generic.InformerOption{generic.WithTransform(dropData)}},
		{name: "no transform, on an informer that has one",
			first:      []generic.InformerOption{generic.WithTransform(dropData)},
			wantOption: "WithTransform", wantCurrent: "func github.com/generic-informers/generic_test.dropData"},
		{name: "a transform, on an informer that has none",
			second:     []generic.InformerOption{generic.WithTransform(dropData)},
			wantOption: "WithTransform", wantCurrent: "none"},
		{name: "another transform",
			first:      []generic.InformerOption{generic.WithTransform(dropData)},
			second:     []generic.InformerOption{generic.WithTransform(keepAll)},
			wantOption: "WithTransform", wantCurrent: "func github.com/generic-informers/generic_test.dropData"},
		{name: "a closure of the same code made again",
			first:      []generic.InformerOption{generic.WithTransform(transformDropping("color"))},
			second:     []generic.InformerOption{generic.WithTransform(transformDropping("size"))},
			wantOption: "WithTransform", wantCurrent: "func github.com/generic-informers/generic_test.transformDropping.func1"},
		{name: "managedFields stripped, on an informer that keeps them",
			second:     []generic.InformerOption{generic.WithStripManagedFields()},
			wantOption: "WithStripManagedFields", wantCurrent: "off"},
		{name: "managedFields stripped, twice",
			first:  []generic.InformerOption{generic.WithStripManagedFields()},
			second: []generic.InformerOption{generic.WithStripManagedFields()}},
		{name: "a compact store, on an informer of objects",
			second:     []generic.InformerOption{generic.WithCompactStore(10)},
			wantOption: "WithCompactStore", wantCurrent: "none (the default store)"},
		{name: "another compact store",
			first:      []generic.InformerOption{generic.WithCompactStore(10)},
			second:     []generic.InformerOption{generic.WithCompactStore(20)},
			wantOption: "WithCompactStore", wantCurrent: "WithCompactStore(10)"},
		{name: "another resync period",
			first:      []generic.InformerOption{generic.WithResyncPeriod(time.Minute)},
			second:     []generic.InformerOption{generic.WithResyncPeriod(time.Hour)},
			wantOption: "WithResyncPeriod", wantCurrent: "1m0s"},
		{name: "a tweak that sets more than selectors, on an informer without",
			second:     []generic.InformerOption{tweakTimeout},
			wantOption: "WithTweakListOptions", wantCurrent: "none"},
		{name: "an error handler, on an informer that logs",
			second:     []generic.InformerOption{generic.WithErrorHandler(ignoreErrors)},
			wantOption: "WithErrorHandler", wantCurrent: "func github.com/generic-informers/generic.logError"},
		{name: "a state handler, on an informer without",
			second:     []generic.InformerOption{generic.WithStateHandler(ignoreStates)},
			wantOption: "WithStateHandler", wantCurrent: "none"},
		{name: "stop when not served, on an informer that probes",
			second:     []generic.InformerOption{generic.WithStopWhenNotServed()},
			wantOption: "WithStopWhenNotServed", wantCurrent: "off"},
		{name: "a metrics provider, on an informer without",
			second:     []generic.InformerOption{generic.WithMetricsProvider(provider)},
			wantOption: "WithMetricsProvider", wantCurrent: "none"},
		{name: "the same metrics provider",
			first:  []generic.InformerOption{generic.WithMetricsProvider(provider)},
			second: []generic.InformerOption{generic.WithMetricsProvider(provider)}},
		{name: "an informer name, on an informer without",
			second:     []generic.InformerOption{generic.WithInformerName(name)},
			wantOption: "WithInformerName", wantCurrent: "none"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			client := newDynamicClient(t, "testdata/configmaps.yaml")
			factory := newFactory(generic.DynamicSource(client), generic.FromUnstructured[*corev1.ConfigMap]())
			defer factory.Shutdown()
			first := acquire(factory, configMapsGVR, tc.first...)
			second, err := factory.Acquire(configMapsGVR, tc.second...)
			var conflict *generic.OptionConflictError
			if errors.As(err, &conflict) {
				if diff := cmp.Diff(tc.wantOption+" "+tc.wantCurrent, conflict.Option+" "+conflict.Current); diff != "" {
					t.Errorf("the refusal's option and the informer's setting (-want +got):\n%s", diff)
				}
				if diff := cmp.Diff(true, first.Release()); diff != "" {
					t.Errorf("the refused Acquire took a hold: the first Handle's Release (-want +got):\n%s", diff)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.wantOption != "" {
				t.Fatalf("the Acquire shared an informer whose %s differs", tc.wantOption)
			}
			if second.Informer() != first.Informer() {
				t.Error("the same selection got another informer")
			}
		})
	}
}

// TestAcquireAddsIndexes: an index a later Acquire asks for is added to
// the shared informer, running or not, and read through either Handle;
// before, ByIndex failed: the index did not exist.
func TestAcquireAddsIndexes(t *testing.T) {
	tests := []struct {
		name string
		// startFirst starts the informer before the second Acquire.
		startFirst bool
	}{
		{name: "before Start"},
		{name: "on a running informer", startFirst: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			client := newDynamicClient(t, "testdata/configmaps.yaml")
			factory := newFactory(generic.DynamicSource(client), generic.FromUnstructured[*corev1.ConfigMap]())
			defer factory.Shutdown()
			ctx, cancel := testContext(t)
			defer cancel()
			first := acquire(factory, configMapsGVR)
			if tc.startFirst {
				factory.Start(ctx)
				if err := factory.WaitForCacheSync(ctx).AsError(); err != nil {
					t.Fatal(err)
				}
			}
			second := acquire(factory, configMapsGVR, generic.WithIndexers(cache.Indexers{"byColor": configMapsByColor}))
			factory.Start(ctx)
			if err := factory.WaitForCacheSync(ctx).AsError(); err != nil {
				t.Fatal(err)
			}
			for _, h := range []generic.Handle[*corev1.ConfigMap]{first, second} {
				blue, err := h.Lister().ByIndex("byColor", "blue")
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff([]string{"team-a/settings"}, keysOf(t, blue)); diff != "" {
					t.Errorf("ByIndex(byColor, blue) (-want +got):\n%s", diff)
				}
			}
		})
	}
}

// TestAcquireIndexesDuringRestarts: Acquires that each ask for an index of
// their own, while the factory is started and its Start context ended
// over and over (each Start replaces the informer that stopped), all
// succeed, and a Handle's ByIndex on its index never answers that the
// index does not exist: it reads it, or fails with ErrInformerStopped
// while no running informer holds the hold; and the informer that runs
// at the end has every index. An Acquire used to fail with client-go's
// "indexer was not added because it has stopped already" when the
// informer stopped under it, and a Handle could read, for a moment, the
// informer its index was not added to: the one replaced, or one that had
// stopped without its State saying so yet.
func TestAcquireIndexesDuringRestarts(t *testing.T) {
	tests := []struct {
		name      string
		acquirers int
		acquires  int
	}{
		{name: "8 acquirers, 20 indexes each", acquirers: 8, acquires: 20},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			server := newShardServer(true, true)
			server.create("cm", 3)
			factory := newFactory[*corev1.ConfigMap](server.Source, nil)
			defer factory.Shutdown()
			stop := make(chan struct{})
			var restarts sync.WaitGroup
			restarts.Go(func() {
				for {
					select {
					case <-stop:
						return
					default:
					}
					ctx, cancel := context.WithCancel(context.Background())
					factory.Start(ctx)
					cancel()
				}
			})
			var mu sync.Mutex
			var problems, acquired []string
			problem := func(format string, args ...any) {
				mu.Lock()
				defer mu.Unlock()
				problems = append(problems, fmt.Sprintf(format, args...))
			}
			var acquirers sync.WaitGroup
			for g := range tc.acquirers {
				acquirers.Go(func() {
					var handles []generic.Handle[*corev1.ConfigMap]
					var names []string
					for k := range tc.acquires {
						name := fmt.Sprintf("index-%d-%d", g, k)
						h, err := factory.Acquire(configMapsGVR, generic.WithIndexers(cache.Indexers{name: configMapsByName}))
						if err != nil {
							problem("Acquire of %s: %v", name, err)
							continue
						}
						handles, names = append(handles, h), append(names, name)
						mu.Lock()
						acquired = append(acquired, name)
						mu.Unlock()
						for j, h := range handles {
							if _, err := h.Lister().ByIndex(names[j], "cm-0"); err != nil && !errors.Is(err, generic.ErrInformerStopped) {
								problem("ByIndex(%s): %v", names[j], err)
							}
						}
					}
				})
			}
			acquirers.Wait()
			close(stop)
			restarts.Wait()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			factory.Start(ctx)
			indexes := acquire(factory, configMapsGVR).Informer().GetIndexer().GetIndexers()
			for _, name := range acquired {
				if _, ok := indexes[name]; !ok {
					problem("the informer running at the end has no index %s", name)
				}
			}
			slices.Sort(problems)
			if diff := cmp.Diff([]string(nil), problems[:min(len(problems), 10)]); diff != "" {
				t.Errorf("%d problems, the first ones (-want +got):\n%s", len(problems), diff)
			}
		})
	}
}
