package controller_test

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/cache"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/controller"
	"github.com/generic-informers/generic/generictest"
	"github.com/generic-informers/generic/internal/shardsel"
	"github.com/generic-informers/generic/internal/widget"
	"github.com/generic-informers/generic/typed"
)

// minDelays is how many consistency delays each write of the lagging tests
// gets before the test lets its watch event through: more than the three
// timeouts after which the controller used to reconcile anyway.
const minDelays = 5

// shortWait makes a consistency wait end at once when the cache lags: the
// tests hold the watch events themselves, the timeout only ends each try.
func shortWait() controller.Option { return controller.WithConsistencyTimeout(time.Millisecond) }

type cmLister = generic.Lister[*unstructured.Unstructured]
type cmClient = *typed.Client[*corev1.ConfigMap]

func cmWith(namespace, name string, labels, data map[string]string) *corev1.ConfigMap {
	cm := configMap(namespace, name)
	cm.Labels, cm.Data = labels, data
	return cm
}

// cachedData returns data[field] of the cached ConfigMap, and whether the
// cache holds it.
func cachedData(cms cmLister, namespace, name, field string) (string, bool) {
	u, err := cms.Namespace(namespace).Get(name)
	if err != nil {
		return "", false
	}
	v, _, _ := unstructured.NestedString(u.Object, "data", field)
	return v, true
}

// update gets the ConfigMap from the server, changes it and updates it.
func update(ctx context.Context, client cmClient, namespace, name string, change func(*corev1.ConfigMap)) error {
	cm, err := client.Get(ctx, cache.ObjectName{Namespace: namespace, Name: name}, metav1.GetOptions{})
	if err != nil {
		return err
	}
	cm = cm.DeepCopy()
	change(cm)
	_, err = client.Update(ctx, cm, metav1.UpdateOptions{})
	return err
}

// TestLaggingCacheNeverReconcilesStale: a controller whose informer's watch
// lags behind its writes (each write's event held until the key has been
// delayed minDelays times) never reconciles a key on a cache older than the
// key's own last write; each delay is reported and counted. It used to
// reconcile anyway after three timeouts in a row, and forget the write.
func TestLaggingCacheNeverReconcilesStale(t *testing.T) {
	const cycles = 20
	tests := []struct {
		name string
		seed []runtime.Object
		// stale reports whether the cache is older than the reconcile's
		// last write, after written writes.
		stale func(cms cmLister, written int) bool
		// write makes write number written+1.
		write func(ctx context.Context, cms cmLister, client cmClient, written int) error
	}{{
		name: "a counter in the primary, updated from the cached state",
		seed: []runtime.Object{cmWith("team-a", "primary", nil, map[string]string{"count": "0"})},
		stale: func(cms cmLister, written int) bool {
			v, _ := cachedData(cms, "team-a", "primary", "count")
			count, _ := strconv.Atoi(v)
			return count < written
		},
		write: func(ctx context.Context, cms cmLister, client cmClient, written int) error {
			u, err := cms.Namespace("team-a").Get("primary")
			if err != nil {
				return err
			}
			var cm corev1.ConfigMap
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &cm); err != nil {
				return err
			}
			cm.Data = map[string]string{"count": strconv.Itoa(written + 1)}
			_, err = client.Update(ctx, &cm, metav1.UpdateOptions{}) // a stale read conflicts
			return err
		},
	}, {
		name: "a secondary object created and deleted in turns",
		seed: []runtime.Object{configMap("team-a", "primary")},
		stale: func(cms cmLister, written int) bool {
			_, present := cachedData(cms, "team-a", "turn", "")
			return present != (written%2 == 1)
		},
		write: func(ctx context.Context, _ cmLister, client cmClient, written int) error {
			if written%2 == 0 {
				_, err := client.Create(ctx, configMap("team-a", "turn"), metav1.CreateOptions{})
				return err
			}
			return client.Delete(ctx, cache.ObjectName{Namespace: "team-a", Name: "turn"}, metav1.DeleteOptions{})
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			// 20 writes, each delayed 5 times or more: a wider bound on
			// the wait for the controller to be idle, on a loaded machine.
			fake := newFake(t, generictest.Objects(tc.seed...), generictest.Timeout(2*time.Minute))
			lag := newLagging(t, fake)
			cms := lag.informer(t, configMapsGVR)
			client, err := typed.ClientFor[*corev1.ConfigMap](fake.Factory())
			if err != nil {
				t.Fatal(err)
			}
			log := &delayLog{onDelay: func(since int) {
				if since >= minDelays {
					lag.gate.flush()
				}
			}}
			var mu sync.Mutex
			written, stale := 0, 0
			reconcile := func(ctx context.Context, key cache.ObjectName) (controller.Result, error) {
				if key.Name != "primary" {
					return controller.Result{}, nil
				}
				mu.Lock()
				defer mu.Unlock()
				if tc.stale(cms.Lister(), written) {
					stale++
					lag.gate.flush() // so that a failing run ends
				}
				if written == cycles {
					return controller.Result{}, nil
				}
				if err := tc.write(ctx, cms.Lister(), client, written); err != nil {
					return controller.Result{}, err
				}
				written++
				log.reset()
				return requeueNow(), nil
			}
			c := newReporting(t, "lagging", controller.For(cms), reconcile, log)
			run(t, c)
			fake.WaitIdle(c)
			mu.Lock()
			defer mu.Unlock()
			reported, counted, others := log.outcome()
			type outcome struct {
				Written, Stale     int
				Others             []error
				CountedAllReported bool
				DelayedEveryWrite  bool
			}
			want := outcome{Written: cycles, CountedAllReported: true, DelayedEveryWrite: true}
			got := outcome{Written: written, Stale: stale, Others: others,
				CountedAllReported: counted == reported, DelayedEveryWrite: reported >= cycles*minDelays}
			if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b error) bool { return a == b })); diff != "" {
				t.Errorf("after %d writes, %d delays reported, %d counted (-want +got):\n%s", written, reported, counted, diff)
			}
		})
	}
}

// TestPendingWriteKeptAcrossTimeouts: a write whose event the watch holds
// keeps its key from being reconciled, through any number of consistency
// timeouts, and stays pending; the reconcile after the event reached the
// cache sees the write. The controller used to reconcile after three
// timeouts, on the state before the write.
func TestPendingWriteKeptAcrossTimeouts(t *testing.T) {
	tests := []struct {
		name string
		// opts select the secondary informer's objects.
		opts []generic.InformerOption
		seed []runtime.Object
		// write is the first reconcile's write; sees whether the cache
		// shows it.
		write func(ctx context.Context, client cmClient) error
		sees  func(cms cmLister) bool
	}{{
		name: "an update of a cached object",
		seed: []runtime.Object{cmWith("team-a", "x", nil, map[string]string{"v": "1"})},
		write: func(ctx context.Context, client cmClient) error {
			return update(ctx, client, "team-a", "x", func(cm *corev1.ConfigMap) { cm.Data["v"] = "2" })
		},
		sees: func(cms cmLister) bool { v, _ := cachedData(cms, "team-a", "x", "v"); return v == "2" },
	}, {
		name: "a create",
		write: func(ctx context.Context, client cmClient) error {
			_, err := client.Create(ctx, configMap("team-a", "x"), metav1.CreateOptions{})
			return err
		},
		sees: func(cms cmLister) bool { _, ok := cachedData(cms, "team-a", "x", ""); return ok },
	}, {
		name: "a delete of a cached object",
		seed: []runtime.Object{configMap("team-a", "x")},
		write: func(ctx context.Context, client cmClient) error {
			return client.Delete(ctx, cache.ObjectName{Namespace: "team-a", Name: "x"}, metav1.DeleteOptions{})
		},
		sees: func(cms cmLister) bool { _, ok := cachedData(cms, "team-a", "x", ""); return !ok },
	}, {
		name: "an update that takes a cached object out of the label selection",
		opts: []generic.InformerOption{generic.WithLabelSelector("app=web")},
		seed: []runtime.Object{cmWith("team-a", "x", map[string]string{"app": "web"}, nil)},
		write: func(ctx context.Context, client cmClient) error {
			return update(ctx, client, "team-a", "x", func(cm *corev1.ConfigMap) { cm.Labels = nil })
		},
		sees: func(cms cmLister) bool { _, ok := cachedData(cms, "team-a", "x", ""); return !ok },
	}, {
		name: "an update of a cached object, field selector on data",
		opts: []generic.InformerOption{generic.WithFieldSelector("data.kind=a")},
		seed: []runtime.Object{cmWith("team-a", "x", nil, map[string]string{"kind": "a", "v": "1"})},
		write: func(ctx context.Context, client cmClient) error {
			return update(ctx, client, "team-a", "x", func(cm *corev1.ConfigMap) { cm.Data["v"] = "2" })
		},
		sees: func(cms cmLister) bool { v, _ := cachedData(cms, "team-a", "x", "v"); return v == "2" },
	}, {
		name: "an update that takes a cached object out of a field selection on data",
		opts: []generic.InformerOption{generic.WithFieldSelector("data.kind=a")},
		seed: []runtime.Object{cmWith("team-a", "x", nil, map[string]string{"kind": "a"})},
		write: func(ctx context.Context, client cmClient) error {
			return update(ctx, client, "team-a", "x", func(cm *corev1.ConfigMap) { cm.Data["kind"] = "b" })
		},
		sees: func(cms cmLister) bool { _, ok := cachedData(cms, "team-a", "x", ""); return !ok },
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fake := newFake(t, generictest.Objects(tc.seed...))
			widgets := generictest.NewInformer[*widget.Widget](fake, generic.WithFieldSelector("metadata.name=large"))
			lag := newLagging(t, fake)
			cms := lag.informer(t, configMapsGVR, tc.opts...)
			client, err := typed.ClientFor[*corev1.ConfigMap](fake.Factory())
			if err != nil {
				t.Fatal(err)
			}
			key := cache.ObjectName{Namespace: "team-a", Name: "large"}
			var c *controller.Controller
			var mu sync.Mutex
			var pendingAtDelays []int
			log := &delayLog{onDelay: func(since int) {
				mu.Lock()
				pendingAtDelays = append(pendingAtDelays, controller.PendingWrites(c, key))
				mu.Unlock()
				if since >= minDelays {
					lag.gate.flush()
				}
			}}
			type seen struct {
				Sees          bool
				DelaysBefore  int
				PendingBefore []int
			}
			var calls int
			var after []seen // what each reconcile after the write saw
			reconcile := func(ctx context.Context, _ cache.ObjectName) (controller.Result, error) {
				mu.Lock()
				defer mu.Unlock()
				calls++
				if calls == 1 {
					if err := tc.write(ctx, client); err != nil {
						return controller.Result{}, err
					}
					return requeueNow(), nil
				}
				reported, _, _ := log.outcome()
				after = append(after, seen{Sees: tc.sees(cms.Lister()), DelaysBefore: reported, PendingBefore: pendingAtDelays})
				if !tc.sees(cms.Lister()) {
					lag.gate.flush() // so that a failing run ends
				}
				return controller.Result{}, nil
			}
			c = newReporting(t, "lagging", controller.For(widgets), reconcile, log,
				controller.Watches(cms, func(*unstructured.Unstructured) []cache.ObjectName { return nil }))
			run(t, c)
			fake.WaitIdle(c)
			mu.Lock()
			defer mu.Unlock()
			if len(after) == 0 {
				t.Fatal("no reconcile after the write")
			}
			first := after[0]
			ones := make([]int, len(first.PendingBefore))
			for i := range ones {
				ones[i] = 1
			}
			type outcome struct {
				Sees               bool
				DelayedAtLeastMin  bool
				PendingAtEachDelay []int
				CountedAllReported bool
				Others             []error
			}
			reported, counted, others := log.outcome()
			want := outcome{Sees: true, DelayedAtLeastMin: true, PendingAtEachDelay: ones, CountedAllReported: true}
			got := outcome{Sees: first.Sees, DelayedAtLeastMin: first.DelaysBefore >= minDelays, PendingAtEachDelay: first.PendingBefore,
				CountedAllReported: reported == counted, Others: others}
			if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b error) bool { return a == b })); diff != "" {
				t.Errorf("the first reconcile after the write, after %d delays (-want +got):\n%s", first.DelaysBefore, diff)
			}
		})
	}
}

// TestUnobservableWritesDropped: a write the cache can never show is not
// waited for: the key is reconciled at once, without a delay, and the
// write is no longer pending, though the watch holds every event. A stopped
// informer is reported.
func TestUnobservableWritesDropped(t *testing.T) {
	otherShard := namespaceOutside(t, shardsel.Range{Index: 0, Count: 2})
	create := func(cm *corev1.ConfigMap) func(context.Context, cmClient) error {
		return func(ctx context.Context, client cmClient) error {
			_, err := client.Create(ctx, cm, metav1.CreateOptions{})
			return err
		}
	}
	tests := []struct {
		name string
		opts []generic.InformerOption
		seed []runtime.Object
		// write is the first reconcile's write; stop stops the
		// informer after it.
		write func(ctx context.Context, client cmClient) error
		stop  bool
	}{{
		name:  "a create in another namespace",
		opts:  []generic.InformerOption{generic.WithNamespace("team-a")},
		write: create(configMap("team-b", "x")),
	}, {
		name:  "a create outside the label selection",
		opts:  []generic.InformerOption{generic.WithLabelSelector("app=web")},
		write: create(configMap("team-a", "x")),
	}, {
		name:  "a create outside a field selection on the name",
		opts:  []generic.InformerOption{generic.WithFieldSelector("metadata.name=watched")},
		write: create(configMap("team-a", "x")),
	}, {
		name:  "a create in another shard",
		opts:  []generic.InformerOption{generic.WithShard(0, 2), generic.WithShardKey(generic.ShardByNamespace)},
		write: create(configMap(otherShard, "x")),
	}, {
		name:  "a create outside a field selection on data, decided when the controller is built",
		opts:  []generic.InformerOption{generic.WithFieldSelector("data.kind=a")},
		write: create(cmWith("team-a", "x", nil, map[string]string{"kind": "b"})),
	}, {
		name: "an update, the informer stopped",
		seed: []runtime.Object{cmWith("team-a", "x", nil, map[string]string{"v": "1"})},
		write: func(ctx context.Context, client cmClient) error {
			return update(ctx, client, "team-a", "x", func(cm *corev1.ConfigMap) { cm.Data["v"] = "2" })
		},
		stop: true,
	}, {
		name: "a delete, the informer stopped",
		seed: []runtime.Object{configMap("team-a", "x")},
		write: func(ctx context.Context, client cmClient) error {
			return client.Delete(ctx, cache.ObjectName{Namespace: "team-a", Name: "x"}, metav1.DeleteOptions{})
		},
		stop: true,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fake := newFake(t, generictest.Objects(tc.seed...))
			widgets := generictest.NewInformer[*widget.Widget](fake, generic.WithFieldSelector("metadata.name=large"))
			lag := newLagging(t, fake) // never flushed
			cms := lag.informer(t, configMapsGVR, tc.opts...)
			client, err := typed.ClientFor[*corev1.ConfigMap](fake.Factory())
			if err != nil {
				t.Fatal(err)
			}
			key := cache.ObjectName{Namespace: "team-a", Name: "large"}
			log := &delayLog{}
			var c *controller.Controller
			var mu sync.Mutex
			calls, pendingAfter := 0, -1
			reconcile := func(ctx context.Context, _ cache.ObjectName) (controller.Result, error) {
				mu.Lock()
				defer mu.Unlock()
				calls++
				if calls > 1 {
					pendingAfter = controller.PendingWrites(c, key)
					return controller.Result{}, nil
				}
				if err := tc.write(ctx, client); err != nil {
					return controller.Result{}, err
				}
				if tc.stop {
					cms.Release()
					if err := wait.PollUntilContextCancel(ctx, time.Millisecond, true, func(context.Context) (bool, error) {
						return cms.Status().State == generic.Stopped, nil
					}); err != nil {
						return controller.Result{}, err
					}
				}
				return requeueNow(), nil
			}
			c = newReporting(t, "unobservable", controller.For(widgets), reconcile, log,
				controller.Watches(cms, func(*unstructured.Unstructured) []cache.ObjectName { return nil }))
			run(t, c)
			fake.WaitIdle(c)
			mu.Lock()
			defer mu.Unlock()
			reported, counted, others := log.outcome()
			stoppedReports := 0
			for _, err := range others {
				if errors.Is(err, generic.ErrInformerStopped) {
					stoppedReports++
				}
			}
			type outcome struct {
				Reconciled             bool
				PendingAfter           int
				Delays, Counted        int
				Others, StoppedReports int
			}
			want := outcome{Reconciled: true}
			if tc.stop {
				want.Others, want.StoppedReports = 1, 1
			}
			got := outcome{Reconciled: calls > 1, PendingAfter: pendingAfter, Delays: reported, Counted: counted,
				Others: len(others), StoppedReports: stoppedReports}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("reported %v (-want +got):\n%s", others, diff)
			}
		})
	}
}

// namespaceOutside returns a namespace that ShardByNamespace does not
// place in shard.
func namespaceOutside(t *testing.T, shard shardsel.Range) string {
	t.Helper()
	selector, _, _ := shardsel.New(shard).Selection(string(generic.ShardByNamespace))
	for i := range 100 {
		ns := "team-" + strconv.Itoa(i)
		if in, err := selector.Matches(configMap(ns, "x")); err == nil && !in {
			return ns
		}
	}
	t.Fatalf("no namespace outside shard %v", shard)
	return ""
}
