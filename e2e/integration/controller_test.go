package integration

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/sharding"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/controller"
	"github.com/generic-informers/generic/e2e/apiserver"
	"github.com/generic-informers/generic/typed"
)

// controllerBound bounds every wait of the controller tests: far above
// what they take on a loaded machine under -race, far below the test
// timeout.
const controllerBound = 2 * time.Minute

// TestControllerReadsItsOwnWrites runs a controller whose reconcile reads a
// ConfigMap's data.count from its informer's Lister and writes count+1,
// until each of 10 ConfigMaps reaches 100: 1,000 write→reconcile cycles.
//
// After each write the reconcile asks to be requeued (Result.Requeue, with
// no delay): the next reconcile of the key starts at once, as a
// controller's does when a secondary object changes or it requeues itself.
// The informer's watch lags watchLag behind the server (laggingWatches),
// as a busy informer's does, so that the write's event has not reached the
// cache by then: without the consistency wait, that reconcile would read
// the state its own last write replaced. (Without the lag, the event
// mostly wins its race with the write's response and the requeue: the
// unprotected row read a stale state in 3 to 5 cycles of 1,000, too few
// to show what the wait prevents; with it, in nearly all.)
//
// With the writes made with the reconcile's context (recorded for the
// key), the package promises that no reconcile reads a state older than
// the controller's last write of its key: the test counts reads of an
// older count (stale reads) and 409 Conflicts (a write based on a stale
// object; nobody else writes these ConfigMaps), and wants none of either.
//
// One row is woken by its update events only (no requeue): each event
// reaches the handler after the cache applied it, so the wait has nothing
// to wait for, and must not stall. The last row writes with a context of
// its own, which is not recorded: nothing is promised, and its numbers
// are only logged, to show what the wait prevents. That a stale read
// always ends in a conflict holds in every row (the server's optimistic
// concurrency) and checks the counting.
func TestControllerReadsItsOwnWrites(t *testing.T) {
	const objects, cycles = 10, 100
	// write writes count next into the cached cm, with ctx.
	type write func(ctx context.Context, client *typed.Client[*corev1.ConfigMap], cm *corev1.ConfigMap, next int) error
	update := func(ctx context.Context, client *typed.Client[*corev1.ConfigMap], cm *corev1.ConfigMap, next int) error {
		cm = cm.DeepCopy()
		if cm.Data == nil {
			cm.Data = map[string]string{}
		}
		cm.Data["count"] = strconv.Itoa(next)
		_, err := client.Update(ctx, cm, metav1.UpdateOptions{})
		return err
	}
	tests := []struct {
		name  string
		write write
		// recorded: the writes are made with the reconcile's context,
		// and the promise holds.
		recorded bool
		// eventsOnly: after a write, the reconcile returns a zero Result
		// and its update event wakes the key; else it asks to be
		// requeued.
		eventsOnly bool
	}{{
		name:     "Update with the reconcile's context, requeued",
		write:    update,
		recorded: true,
	}, {
		name:       "Update with the reconcile's context, woken by its update events",
		write:      update,
		recorded:   true,
		eventsOnly: true,
	}, {
		name: "merge Patch with the reconcile's context, requeued",
		write: func(ctx context.Context, client *typed.Client[*corev1.ConfigMap], cm *corev1.ConfigMap, next int) error {
			// The resourceVersion in the patch makes the server refuse
			// it (409) if cm is not the stored state, as an Update.
			patch := fmt.Sprintf(`{"metadata":{"resourceVersion":%q},"data":{"count":%q}}`, cm.ResourceVersion, strconv.Itoa(next))
			_, err := client.Patch(ctx, cache.MetaObjectToName(cm), types.MergePatchType, []byte(patch), metav1.PatchOptions{})
			return err
		},
		recorded: true,
	}, {
		name: "Update with a context of its own, requeued (unprotected: numbers logged only)",
		write: func(_ context.Context, client *typed.Client[*corev1.ConfigMap], cm *corev1.ConfigMap, next int) error {
			return update(context.Background(), client, cm, next)
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			baseline := goleak.IgnoreCurrent()
			config, conns := trackedConfig(shared.Config)
			config = laggingWatches(config, watchLag)
			defer checkNoLeaks(t, baseline)
			defer conns.closeAll()
			client := kubernetes.NewForConfigOrDie(config)
			namespace := generateNamespace(t, client, "ctrl-ryw-")

			factory, err := typed.NewFactory(config, scheme.Scheme, generic.WithNamespace(namespace))
			if err != nil {
				t.Fatal(err)
			}
			defer factory.Shutdown()
			configMaps, err := typed.InformerFor[*corev1.ConfigMap](factory)
			if err != nil {
				t.Fatal(err)
			}
			cms, err := typed.ClientFor[*corev1.ConfigMap](factory)
			if err != nil {
				t.Fatal(err)
			}

			var mu sync.Mutex
			written := map[cache.ObjectName]int{} // the count the controller last wrote, by key
			var reconciles, stale, conflicts, reportedErrors int
			behind := 0                             // writes whose event the cache had not applied when they returned
			finished := map[cache.ObjectName]bool{} // keys a reconcile read at cycles
			allFinished := make(chan struct{})
			reconcile := func(ctx context.Context, key cache.ObjectName) (controller.Result, error) {
				cm, err := configMaps.Lister().Namespace(key.Namespace).Get(key.Name)
				if err != nil {
					return controller.Result{}, err // never deleted: reported, counted
				}
				count, err := strconv.Atoi(cm.Data["count"])
				if err != nil {
					return controller.Result{}, err
				}
				mu.Lock()
				reconciles++
				last := written[key]
				if count < last {
					stale++
				}
				if count >= cycles && !finished[key] {
					finished[key] = true
					if len(finished) == objects {
						close(allFinished)
					}
				}
				mu.Unlock()
				if count >= cycles {
					return controller.Result{}, nil
				}
				switch err := tt.write(ctx, cms, cm, count+1); {
				case apierrors.IsConflict(err):
					// A stale read: the event of the newer state is on
					// its way, and enqueues the key again.
					mu.Lock()
					conflicts++
					mu.Unlock()
					return controller.Result{}, nil
				case err != nil:
					return controller.Result{}, err
				}
				// Whether the write's event had reached the cache when the
				// write returned: if not, a reconcile that started now
				// would read the state it replaced. (Read after the write
				// returned: a measure of how much the wait had to do, not
				// an exact one.)
				now, err := configMaps.Lister().Namespace(key.Namespace).Get(key.Name)
				mu.Lock()
				written[key] = count + 1
				if err == nil && now.Data["count"] != strconv.Itoa(count+1) {
					behind++
				}
				mu.Unlock()
				// The write's update event enqueues the key too.
				return controller.Result{Requeue: !tt.eventsOnly}, nil //nolint:staticcheck // SA1019: an immediate requeue (no-delay limiter) that races the watch is what this measures
			}
			c, err := controller.New("reads-its-own-writes", controller.For(configMaps), reconcile,
				controller.WithWorkers(objects), // a key waiting for its cache holds no other back
				// Requeue at once: the default limiter's delays (and its
				// 10 a second overall) would make the test a test of it.
				controller.WithRateLimiter(workqueue.NewTypedItemExponentialFailureRateLimiter[cache.ObjectName](0, 0)),
				controller.WithReconcileErrorHandler(func(_ context.Context, err error) {
					mu.Lock()
					defer mu.Unlock()
					reportedErrors++
					t.Logf("reported: %v", err)
				}))
			if err != nil {
				t.Fatal(err)
			}

			ctx, cancel := context.WithCancel(context.Background())
			var run *running
			defer func() { // on every path: the controller stops before the factory
				cancel()
				if run != nil {
					_ = run.wait()
				}
			}()
			for i := range objects {
				cm := &corev1.ConfigMap{
					ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: fmt.Sprintf("counter-%d", i)},
					Data:       map[string]string{"count": "0"},
				}
				if _, err := cms.Create(ctx, cm, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			start := time.Now()
			factory.Start(ctx)
			run = runController(ctx, c)
			select {
			case <-allFinished:
			case <-run.done:
				t.Fatalf("the controller stopped before the counts reached %d: %v", cycles, run.err)
			case <-time.After(controllerBound):
				mu.Lock()
				done, last := len(finished), fmt.Sprint(written)
				mu.Unlock()
				t.Fatalf("after %v, %d of %d keys reached %d; last written: %v", controllerBound, done, objects, cycles, last)
			}
			elapsed := time.Since(start)
			cancel()
			if err := run.wait(); err != nil {
				t.Errorf("Run: %v", err)
			}

			list, err := cms.List(context.Background(), namespace, metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			got, want := map[string]string{}, map[string]string{}
			for _, cm := range list {
				got[cm.Name] = cm.Data["count"]
			}
			for i := range objects {
				want[fmt.Sprintf("counter-%d", i)] = strconv.Itoa(cycles)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("counts on the server (-want +got):\n%s", diff)
			}

			mu.Lock()
			defer mu.Unlock()
			t.Logf("%d objects x %d cycles in %v: %d reconciles, %d writes not yet cached when they returned, %d stale reads, %d conflicts, %d errors reported",
				objects, cycles, elapsed.Round(time.Millisecond), reconciles, behind, stale, conflicts, reportedErrors)
			if stale != conflicts {
				t.Errorf("%d stale reads but %d conflicts: each write based on a stale read must be refused, and only those", stale, conflicts)
			}
			if tt.recorded {
				type counts struct{ Stale, Conflicts int }
				if diff := cmp.Diff(counts{}, counts{Stale: stale, Conflicts: conflicts}); diff != "" {
					t.Errorf("reads older than the controller's own last write (-want +got):\n%s", diff)
				}
			}
		})
	}
}

// watchLag is how far behind the server TestControllerReadsItsOwnWrites's
// informer watches.
const watchLag = 20 * time.Millisecond

// laggingWatches delays what the watch responses of config carry by lag:
// each chunk read from the server is handed on lag after it came.
func laggingWatches(config *rest.Config, lag time.Duration) *rest.Config {
	config = rest.CopyConfig(config)
	config.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
			resp, err := rt.RoundTrip(req)
			if err != nil || req.URL.Query().Get("watch") != "true" {
				return resp, err
			}
			resp.Body = newDelayLine(resp.Body, lag)
			return resp, nil
		})
	})
	return config
}

// delayLine is a response body that hands on what it reads lag after it
// read it.
type delayLine struct {
	body    io.ReadCloser
	lag     time.Duration
	chunks  chan delayedChunk
	closed  chan struct{}
	close   sync.Once
	pending []byte
	err     error
}

type delayedChunk struct {
	data []byte
	due  time.Time
	err  error
}

func newDelayLine(body io.ReadCloser, lag time.Duration) *delayLine {
	d := &delayLine{body: body, lag: lag, chunks: make(chan delayedChunk, 1024), closed: make(chan struct{})}
	go d.pump()
	return d
}

// pump reads the body until it fails (as it does once closed).
func (d *delayLine) pump() {
	for {
		buf := make([]byte, 32*1024)
		n, err := d.body.Read(buf)
		select {
		case d.chunks <- delayedChunk{data: buf[:n], due: time.Now().Add(d.lag), err: err}:
		case <-d.closed:
			return
		}
		if err != nil {
			return
		}
	}
}

func (d *delayLine) Read(p []byte) (int, error) {
	for len(d.pending) == 0 {
		if d.err != nil {
			return 0, d.err
		}
		var c delayedChunk
		select {
		case c = <-d.chunks:
		case <-d.closed:
			return 0, net.ErrClosed
		}
		timer := time.NewTimer(time.Until(c.due))
		select {
		case <-timer.C:
		case <-d.closed:
			timer.Stop()
			return 0, net.ErrClosed
		}
		d.pending, d.err = c.data, c.err
	}
	n := copy(p, d.pending)
	d.pending = d.pending[n:]
	return n, nil
}

func (d *delayLine) Close() error {
	d.close.Do(func() { close(d.closed) })
	return d.body.Close()
}

// TestControllerShardedReplicas runs two replicas of a controller of
// ConfigMaps, shard 0 and 1 of 2 (a factory each, over the same server),
// while ConfigMaps are created and deleted: 200 creates, and after every
// second one the delete of an earlier one, 100 in all (some right after
// their create, some long after). Each key is reconciled by exactly one
// replica, the one whose shard holds the ConfigMap's UID; the last
// reconcile of a ConfigMap still there sees it, and that of a deleted one
// (by the same replica) sees it gone. With the ShardedListAndWatch gate
// off, the informers filter on the client; on, the server does.
func TestControllerShardedReplicas(t *testing.T) {
	const creates = 200
	forEachShardServer(t, func(t *testing.T, server *apiserver.Server, gate bool) {
		baseline := goleak.IgnoreCurrent()
		config, conns := trackedConfig(server.Config)
		defer checkNoLeaks(t, baseline)
		defer conns.closeAll()
		client := kubernetes.NewForConfigOrDie(config)
		namespace := generateNamespace(t, client, "ctrl-shards-")

		type observation struct {
			replica int
			present bool
		}
		var mu sync.Mutex
		observed := map[string][]observation{} // by name, in the order of the reconciles
		ctx, cancel := context.WithCancel(context.Background())
		var controllers []*controller.Controller
		var runs []*running
		var factories []*typed.Factory
		defer func() { // on every path: the controllers stop before the factories
			cancel()
			for _, r := range runs {
				_ = r.wait()
			}
			for _, f := range factories {
				f.Shutdown()
			}
		}()
		for i := range 2 {
			factory, err := typed.NewFactory(config, scheme.Scheme, generic.WithNamespace(namespace), generic.WithShard(i, 2))
			if err != nil {
				t.Fatal(err)
			}
			factories = append(factories, factory)
			configMaps, err := typed.InformerFor[*corev1.ConfigMap](factory)
			if err != nil {
				t.Fatal(err)
			}
			reconcile := func(_ context.Context, key cache.ObjectName) (controller.Result, error) {
				_, err := configMaps.Lister().Namespace(key.Namespace).Get(key.Name)
				if err != nil && !apierrors.IsNotFound(err) {
					return controller.Result{}, err
				}
				mu.Lock()
				defer mu.Unlock()
				observed[key.Name] = append(observed[key.Name], observation{replica: i, present: err == nil})
				return controller.Result{}, nil
			}
			c, err := controller.New(fmt.Sprintf("replica-%d", i), controller.For(configMaps), reconcile, controller.WithWorkers(2))
			if err != nil {
				t.Fatal(err)
			}
			factory.Start(ctx)
			controllers = append(controllers, c)
			runs = append(runs, runController(ctx, c))
		}
		// The writes start once both caches have synced: an object created
		// and deleted before an informer's first list is never seen by it
		// (client-go's contract too), and the test would wait for a
		// reconcile that cannot come. CI saw it: cm-0, the first created
		// and deleted, reconciled by neither replica.
		for i, f := range factories {
			syncCtx, cancelSync := context.WithTimeout(ctx, controllerBound)
			err := f.WaitForCacheSync(syncCtx).AsError()
			cancelSync()
			if err != nil {
				t.Fatalf("replica %d: %v", i, err)
			}
		}

		// The writes, and what each key's reconciles must end with.
		type outcome struct {
			Replicas []int // the replicas that reconciled the key
			Last     string
		}
		want := map[string]outcome{}
		cms := client.CoreV1().ConfigMaps(namespace)
		uids := map[string]types.UID{}
		start := time.Now()
		for i := range creates {
			name := fmt.Sprintf("cm-%d", i)
			created, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			uids[name] = created.UID
			want[name] = outcome{Replicas: []int{shardOf(created.UID)}, Last: "present"}
			if i%2 == 1 {
				doomed := fmt.Sprintf("cm-%d", i/2)
				if err := cms.Delete(ctx, doomed, metav1.DeleteOptions{Preconditions: metav1.NewUIDPreconditions(string(uids[doomed]))}); err != nil {
					t.Fatal(err)
				}
				want[doomed] = outcome{Replicas: want[doomed].Replicas, Last: "deleted"}
			}
		}

		got := func() map[string]outcome {
			mu.Lock()
			defer mu.Unlock()
			got := map[string]outcome{}
			for name, obs := range observed {
				var o outcome
				for _, ob := range obs {
					if !slices.Contains(o.Replicas, ob.replica) {
						o.Replicas = append(o.Replicas, ob.replica)
					}
				}
				slices.Sort(o.Replicas)
				o.Last = map[bool]string{true: "present", false: "deleted"}[obs[len(obs)-1].present]
				got[name] = o
			}
			return got
		}
		// Done once each key's owner ended as it must, and neither replica
		// has anything left to do.
		err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, controllerBound, true, func(context.Context) (bool, error) {
			for _, c := range controllers {
				if !c.Idle().Idle {
					return false, nil
				}
			}
			return cmp.Equal(want, got()), nil
		})
		elapsed := time.Since(start)
		cancel()
		for i, r := range runs {
			if err := r.wait(); err != nil {
				t.Errorf("replica %d: Run: %v", i, err)
			}
		}
		if diff := cmp.Diff(want, got()); diff != "" {
			t.Errorf("replicas and last reconcile of each key (-want +got):\n%s", diff)
		}
		if err != nil {
			t.Errorf("waiting for the replicas: %v", err)
		}
		mu.Lock()
		defer mu.Unlock()
		perReplica := [2]int{}
		reconciles := 0
		for _, obs := range observed {
			perReplica[obs[0].replica]++
			reconciles += len(obs)
		}
		t.Logf("gate %v: %d creates and %d deletes reconciled in %v: %d reconciles; keys per replica %v",
			gate, creates, creates/2, elapsed.Round(time.Millisecond), reconciles, perReplica)
	})
}

// shardOf is the shard of 2 that holds an object of uid: the top bit of
// the FNV-1a hash of the UID (generic.Shard: range i of n is
// [i·2^64/n, (i+1)·2^64/n)).
func shardOf(uid types.UID) int {
	h, err := strconv.ParseUint(sharding.HashField(string(uid)), 16, 64)
	if err != nil {
		panic(err)
	}
	return int(h >> 63)
}

// running is a controller Run in a goroutine of its own.
type running struct {
	done chan struct{} // closed when Run returned
	err  error         // what it returned
}

// runController runs c until ctx ends.
func runController(ctx context.Context, c *controller.Controller) *running {
	r := &running{done: make(chan struct{})}
	go func() {
		defer close(r.done)
		r.err = c.Run(ctx)
	}()
	return r
}

// wait returns what Run returned, once it has.
func (r *running) wait() error {
	<-r.done
	return r.err
}

// generateNamespace creates a namespace named prefix and a random suffix
// (a test may run more than once against the same server) and returns its
// name.
func generateNamespace(t *testing.T, client kubernetes.Interface, prefix string) string {
	t.Helper()
	ns, err := client.CoreV1().Namespaces().Create(context.Background(),
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

// connTracker holds the connections of a rest.Config to the server, so
// that a test can close them when done: client-go keeps idle connections
// open (a goroutine or two each, and the server's for them), which a leak
// check would report.
type connTracker struct {
	mu    sync.Mutex
	conns []net.Conn
}

// trackedConfig is config without client-side rate limits (fastConfig),
// dialing through a connTracker.
func trackedConfig(config *rest.Config) (*rest.Config, *connTracker) {
	tracker := &connTracker{}
	config = fastConfig(config)
	var dialer net.Dialer
	config.Dial = func(ctx context.Context, network, address string) (net.Conn, error) {
		conn, err := dialer.DialContext(ctx, network, address)
		if err == nil {
			tracker.mu.Lock()
			tracker.conns = append(tracker.conns, conn)
			tracker.mu.Unlock()
		}
		return conn, err
	}
	return config, tracker
}

func (c *connTracker) closeAll() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, conn := range c.conns {
		_ = conn.Close() // an error: closed already
	}
	c.conns = nil
}

// checkNoLeaks fails the test if goroutines other than baseline's are
// still running 30 s from now (goleak.Find waits a little each time; a
// loaded machine may need longer for goroutines to end).
func checkNoLeaks(t *testing.T, baseline goleak.Option) {
	t.Helper()
	var err error
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); {
		if err = goleak.Find(baseline); err == nil {
			return
		}
	}
	t.Errorf("goroutines left behind: %v", err)
}
