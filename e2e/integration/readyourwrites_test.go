package integration

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/e2e/apiserver"
	"github.com/generic-informers/generic/typed"
)

// rywQuietWatchTimeout is the watch timeout the quiet resource's informer asks
// for (the reflector asks for 5 to 10 minutes). kube-apiserver sends a
// bookmark on each watch about once a minute and 2 s before the watch
// times out (k8s.io/apiserver pkg/storage/cacher: defaultBookmarkFrequency,
// cacheWatcher.nextBookmarkTime): a short timeout makes the bookmark come
// after 6 s instead of up to a minute, so that the test does not take one.
const rywQuietWatchTimeout = 8

// TestReadYourWrites writes ConfigMaps and reads each write from the cache
// right after waiting for it, with other writers on the same resource; it
// waits for a delete, for a resource version on a resource nobody writes
// (met by a bookmark), and for one that will not come (ended by ctx).
func TestReadYourWrites(t *testing.T) {
	const namespace = "ryw-a"
	c := newCluster(t, shared)
	apply(t, c, namespaces("ryw")...)
	client, err := kubernetes.NewForConfig(shared.Config)
	if err != nil {
		t.Fatal(err)
	}
	factory, err := typed.NewFactory(shared.Config, scheme.Scheme, generic.WithNamespace(namespace))
	if err != nil {
		t.Fatal(err)
	}
	defer factory.Shutdown()
	configMaps, err := typed.InformerFor[*corev1.ConfigMap](factory)
	if err != nil {
		t.Fatal(err)
	}
	// PodTemplates: a resource no test writes.
	quiet, err := typed.InformerFor[*corev1.PodTemplate](factory,
		generic.WithTweakListOptions(func(options *metav1.ListOptions) {
			if options.TimeoutSeconds != nil { // a watch
				options.TimeoutSeconds = new(int64(rywQuietWatchTimeout))
			}
		}))
	if err != nil {
		t.Fatal(err)
	}
	syncAll(t, factory.Start, factory.WaitForCacheSync)
	ctx := testContext(t)
	cms := client.CoreV1().ConfigMaps(namespace)

	t.Run("write, wait, get, with concurrent writers", func(t *testing.T) {
		const iterations = 1000
		stopWriters := rywWriters(t, cms, 3)
		target, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "target"}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		latencies := make([]time.Duration, 0, iterations)
		for i := range iterations {
			var written *corev1.ConfigMap
			var wait func() error
			switch i % 10 {
			case 9: // a create
				written, err = cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("created-%d", i)}}, metav1.CreateOptions{})
				wait = func() error { return configMaps.WaitForWrite(ctx, written) }
			default: // an update, waited for either way
				target = target.DeepCopy()
				if target.Data == nil {
					target.Data = map[string]string{}
				}
				target.Data["i"] = strconv.Itoa(i)
				written, err = cms.Update(ctx, target, metav1.UpdateOptions{})
				target = written
				if i%2 == 0 {
					wait = func() error { return configMaps.WaitForWrite(ctx, written) }
				} else {
					wait = func() error { return configMaps.WaitForResourceVersion(ctx, written.ResourceVersion) }
				}
			}
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			if err := wait(); err != nil {
				t.Fatalf("iteration %d: %v", i, err)
			}
			latencies = append(latencies, time.Since(start))
			// Nothing but this loop writes what it reads: the cache holds
			// exactly what it wrote.
			got, err := configMaps.Lister().Namespace(namespace).Get(written.Name)
			if err != nil {
				t.Fatalf("iteration %d: get %s after the wait: %v", i, written.Name, err)
			}
			if got.ResourceVersion != written.ResourceVersion || got.Data["i"] != written.Data["i"] {
				t.Fatalf("iteration %d: cached %s at resourceVersion %s with i=%q; wrote resourceVersion %s with i=%q",
					i, written.Name, got.ResourceVersion, got.Data["i"], written.ResourceVersion, written.Data["i"])
			}
		}
		writes := stopWriters()
		slices.Sort(latencies)
		t.Logf("%d waits (with %d concurrent writes): p50 %v, p99 %v, max %v", iterations, writes,
			latencies[len(latencies)/2], latencies[len(latencies)*99/100], latencies[len(latencies)-1])
	})

	t.Run("delete, wait, NotFound", func(t *testing.T) {
		doomed, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "doomed"}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := cms.Delete(ctx, doomed.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		// doomed is the object as last written: client-go's Delete
		// returns none.
		if err := configMaps.WaitForDelete(ctx, doomed); err != nil {
			t.Fatal(err)
		}
		if _, err := configMaps.Lister().Namespace(namespace).Get(doomed.Name); !apierrors.IsNotFound(err) {
			t.Fatalf("get %s after the delete and the wait: %v, want NotFound", doomed.Name, err)
		}
	})

	t.Run("a resource version that will not come ends with ctx", func(t *testing.T) {
		last, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "last"}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		rv, err := strconv.ParseUint(last.ResourceVersion, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		// That the wait returns as its context ends, not at a later poll,
		// holds by construction (it selects on ctx.Done()); a bound in real
		// time would be a timing claim a loaded machine can break. A wait
		// that ignored its context would not return at all.
		const bound = 300 * time.Millisecond
		waitCtx, cancel := context.WithTimeout(ctx, bound)
		defer cancel()
		start := time.Now()
		err = configMaps.WaitForResourceVersion(waitCtx, strconv.FormatUint(rv+1_000_000_000, 10))
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("wait for a resource version far ahead: %v, want an error wrapping context.DeadlineExceeded", err)
		}
		t.Logf("%v, after %v", err, time.Since(start))
	})

	t.Run("a quiet resource moves with bookmarks", func(t *testing.T) {
		// A write to ConfigMaps; none to PodTemplates.
		elsewhere, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "elsewhere"}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		// The server's bookmarks carry the resource version its watch
		// cache has reached; on a resource nobody writes, that moves when
		// etcd reports progress: every 5 s here, as under kubeadm
		// (--watch-progress-notify-interval; etcd's default is 10 min).
		// With the short watch timeout a bookmark comes every few seconds,
		// so the wait takes about rywQuietWatchTimeout plus etcd's
		// interval; it is bounded by what Informer.WaitForResourceVersion
		// promises whatever the watch timeout (a bookmark about once a
		// minute), with room for a loaded machine, not by that estimate.
		const bound = 3 * time.Minute
		waitCtx, cancel := context.WithTimeout(ctx, bound)
		defer cancel()
		start := time.Now()
		if err := quiet.WaitForResourceVersion(waitCtx, elsewhere.ResourceVersion); err != nil {
			t.Fatalf("wait on PodTemplates for the resource version of a ConfigMap write: %v", err)
		}
		t.Logf("PodTemplates reached resource version %s of a ConfigMap write in %v", elsewhere.ResourceVersion, time.Since(start))
	})
}

// rywWriters starts n goroutines, each updating a ConfigMap of its
// own in a loop, and returns the function that stops them and reports how
// many writes they made; it fails the test if one failed.
func rywWriters(t *testing.T, cms interface {
	Create(context.Context, *corev1.ConfigMap, metav1.CreateOptions) (*corev1.ConfigMap, error)
	Update(context.Context, *corev1.ConfigMap, metav1.UpdateOptions) (*corev1.ConfigMap, error)
}, n int) (stop func() int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var mu sync.Mutex
	var writes int
	var errs []error
	for w := range n {
		cm, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("writer-%d", w)}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			for i := 0; ctx.Err() == nil; i++ {
				cm = cm.DeepCopy()
				if cm.Data == nil {
					cm.Data = map[string]string{}
				}
				cm.Data["i"] = strconv.Itoa(i)
				updated, err := cms.Update(ctx, cm, metav1.UpdateOptions{})
				if err != nil {
					if ctx.Err() == nil {
						mu.Lock()
						errs = append(errs, err)
						mu.Unlock()
					}
					return
				}
				cm = updated
				mu.Lock()
				writes++
				mu.Unlock()
			}
		})
	}
	return func() int {
		cancel()
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			t.Fatalf("a concurrent writer: %v", err)
		}
		return writes
	}
}

// TestWaitForWriteOutsideSelection is defect 1: a write outside an
// informer's selection (another namespace, labels its selector does not
// match, another shard, gate on or off) is an event the informer never
// stores, so its cache's resource version did not move and WaitForWrite
// ended only at the server's next watch bookmark: 59.4 to 60.1 s for 7
// writes in a row. Each of several writes in a row must now return within
// a bound far below the bookmark period (and a first write right after
// the watch starts is not enough: an early bookmark could pass it).
func TestWaitForWriteOutsideSelection(t *testing.T) {
	// bound is far below kube-apiserver's minute between bookmarks, far
	// above what a wait that does not need one takes on a loaded machine.
	const bound = 20 * time.Second
	const writes = 7
	type write struct{ namespace, team string }
	run := func(t *testing.T, server *apiserver.Server, prefix string, opts []generic.FactoryOption, written func(i int) write) {
		c := newCluster(t, server)
		apply(t, c, namespaces(prefix)...)
		client, err := kubernetes.NewForConfig(server.Config)
		if err != nil {
			t.Fatal(err)
		}
		factory, err := typed.NewFactory(server.Config, scheme.Scheme, opts...)
		if err != nil {
			t.Fatal(err)
		}
		defer factory.Shutdown()
		configMaps, err := typed.InformerFor[*corev1.ConfigMap](factory)
		if err != nil {
			t.Fatal(err)
		}
		syncAll(t, factory.Start, factory.WaitForCacheSync)
		for i := range writes {
			w := written(i)
			cm, err := client.CoreV1().ConfigMaps(w.namespace).Create(testContext(t), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
				Name: fmt.Sprintf("%s-%d", prefix, i), Labels: map[string]string{"team": w.team},
			}}, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), bound)
			start := time.Now()
			err = configMaps.WaitForWrite(ctx, cm)
			cancel()
			if err != nil {
				t.Fatalf("write %d: %v", i, err)
			}
			t.Logf("write %d: WaitForWrite returned after %v", i, time.Since(start))
		}
	}
	t.Run("another namespace", func(t *testing.T) {
		run(t, shared, "rywns", []generic.FactoryOption{generic.WithNamespace("rywns-a")},
			func(int) write { return write{namespace: "rywns-b", team: "a"} })
	})
	t.Run("labels the selector does not match", func(t *testing.T) {
		run(t, shared, "rywlabel", []generic.FactoryOption{generic.WithNamespace("rywlabel-a"), generic.WithLabelSelector("team=a")},
			func(int) write { return write{namespace: "rywlabel-a", team: "b"} })
	})
	forEachShardServer(t, func(t *testing.T, server *apiserver.Server, gate bool) {
		// Of shard 0 of 2, about half the writes are outside, by the UIDs
		// the server gives them.
		run(t, server, "rywshard", []generic.FactoryOption{generic.WithNamespace("rywshard-a"), generic.WithShard(0, 2)},
			func(int) write { return write{namespace: "rywshard-a", team: "a"} })
	})
}
