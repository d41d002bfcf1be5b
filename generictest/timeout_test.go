package generictest_test

import (
	"errors"
	"fmt"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/scheme"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"

	"github.com/generic-informers/generic/generictest"
)

// boundedTB is a testing.TB double for waits that fail: Fatal and Fatalf
// record the first message and end the goroutine, as the real ones do,
// without failing the real test; Cleanup keeps the functions for
// runCleanups; Deadline is the one set, if any. Everything else goes to the
// real test.
type boundedTB struct {
	testing.TB
	deadline time.Time

	mu       sync.Mutex
	fatal    string
	cleanups []func()
}

func (b *boundedTB) Fatal(args ...any) { b.fail(fmt.Sprint(args...)) }

func (b *boundedTB) Fatalf(format string, args ...any) { b.fail(fmt.Sprintf(format, args...)) }

func (b *boundedTB) fail(msg string) {
	b.mu.Lock()
	if b.fatal == "" {
		b.fatal = msg
	}
	b.mu.Unlock()
	runtime.Goexit()
}

func (b *boundedTB) Cleanup(f func()) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.cleanups = append(b.cleanups, f)
}

func (b *boundedTB) Deadline() (time.Time, bool) { return b.deadline, !b.deadline.IsZero() }

// run calls f in its own goroutine, so that a Fatal ends f only.
func (b *boundedTB) run(f func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	<-done
}

// runCleanups runs the cleanups, last first, as testing does.
func (b *boundedTB) runCleanups() {
	b.mu.Lock()
	cleanups := b.cleanups
	b.cleanups = nil
	b.mu.Unlock()
	for i := len(cleanups) - 1; i >= 0; i-- {
		b.run(cleanups[i])
	}
}

func (b *boundedTB) message() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.fatal
}

// blockingHandler blocks in each call until release is closed.
type blockingHandler struct{ release <-chan struct{} }

func (h blockingHandler) OnAdd(*corev1.ConfigMap, bool)                   { <-h.release }
func (h blockingHandler) OnUpdate(_, _ *corev1.ConfigMap)                 { <-h.release }
func (h blockingHandler) OnDelete(cache.DeletedObject[*corev1.ConfigMap]) { <-h.release }

func settings() *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "settings"}}
}

// The waits of the tests below that must fail are bounded by the Fake's
// Timeout (or the test's deadline), and so are the waits of their set-up,
// which must succeed: an informer's sync and first watch, a new handler's
// replay of the cache. How long the set-up takes is the machine's business
// (under -race on a loaded machine everything takes ten times longer), so
// a case whose set-up did not fit the bound runs again with twice the
// bound, from firstTimeout up to maxTimeout.
const (
	firstTimeout = time.Second
	maxTimeout   = 16 * time.Second
)

// deadlineMargin is how long before the test's deadline the Fake's waits
// end (generictest's deadlineMargin).
const deadlineMargin = 5 * time.Second

// setUpFailed reports whether msg is the failure of a wait that a case
// needs to succeed (an informer's sync or first watch, a new handler's
// replay of the cache) rather than of the one it makes fail, whose message
// holds want: the set-up did not fit the bound.
func setUpFailed(msg, want string) bool {
	if strings.Contains(msg, want) {
		return false
	}
	for _, setUp := range []string{"the informers did not sync within", "the informers did not start watching within", "did not receive the cached objects within"} {
		if strings.Contains(msg, setUp) {
			return true
		}
	}
	return false
}

// namedBound is the bound a wait's failure names ("... within 987ms ..."),
// if it names one.
func namedBound(msg string) (time.Duration, bool) {
	m := regexp.MustCompile(`within ([0-9.]+[a-zµ]+)`).FindStringSubmatch(msg)
	if m == nil {
		return 0, false
	}
	d, err := time.ParseDuration(m[1])
	return d, err == nil
}

// TestWaitsEndAtTheTimeout: every wait of the Fake that cannot be met fails
// the test once its bound has passed, saying what it waited for, within
// what bound, and what it saw, instead of running until the test binary's
// deadline.
func TestWaitsEndAtTheTimeout(t *testing.T) {
	tests := []struct {
		name string
		// deadline: the test's deadline is deadlineMargin and the bound
		// away, and the Fake has no Timeout of its own.
		deadline bool
		// use waits; a blocked handler returns once release is closed,
		// after use and before the cleanups. timeout is the bound.
		use func(tb testing.TB, timeout time.Duration, release <-chan struct{})
		// wantFatal are parts of the failure's message, the first one
		// naming the wait that fails; %[1]v in them is the bound.
		wantFatal []string
	}{{
		name: "WaitForState of a state never reached",
		use: func(tb testing.TB, timeout time.Duration, _ <-chan struct{}) {
			fake := generictest.New(tb, scheme.Scheme, generictest.Timeout(timeout), generictest.Objects(settings()))
			generictest.WaitForState(generictest.NewInformer[*corev1.ConfigMap](fake), []string{"team-a/never"}, keysOf)
		},
		wantFatal: []string{"the cache of /v1, Resource=configmaps did not reach the state wanted within %[1]v (-want +got)", `"team-a/never"`, `"team-a/settings"`},
	}, {
		name:     "the test's deadline, if sooner, bounds the wait",
		deadline: true,
		use: func(tb testing.TB, _ time.Duration, _ <-chan struct{}) {
			fake := generictest.New(tb, scheme.Scheme)
			generictest.WaitForState(generictest.NewInformer[*corev1.ConfigMap](fake), []string{"team-a/never"}, keysOf)
		},
		// The bound is what is left of the test's time, less the margin:
		// checked below, as no more than the timeout.
		wantFatal: []string{"the cache of /v1, Resource=configmaps did not reach the state wanted within"},
	}, {
		name: "a change a handler never sees",
		use: func(tb testing.TB, timeout time.Duration, release <-chan struct{}) {
			fake := generictest.New(tb, scheme.Scheme, generictest.Timeout(timeout), generictest.Objects(settings()))
			configMaps := generictest.NewInformer[*corev1.ConfigMap](fake)
			if _, err := configMaps.AddEventHandler(cache.TypedResourceEventHandlerFuncs[*corev1.ConfigMap]{
				UpdateFunc: func(_, _ *corev1.ConfigMap) { <-release },
			}); err != nil {
				tb.Fatal(err)
			}
			changed := settings()
			changed.Data = map[string]string{"color": "red"} // a no-op update would be no change
			fake.Update(changed)
		},
		wantFatal: []string{"handlers did not see the change within %[1]v", "has not seen team-a/settings at resourceVersion 1000002; it has it at resourceVersion 1000001"},
	}, {
		name: "informers that never sync",
		use: func(tb testing.TB, timeout time.Duration, _ <-chan struct{}) {
			fake := generictest.New(tb, scheme.Scheme, generictest.Timeout(timeout))
			fake.Dynamic().PrependReactor("list", "configmaps", func(clienttesting.Action) (bool, k8sruntime.Object, error) {
				return true, nil, errors.New("the list is down")
			})
			generictest.NewInformer[*corev1.ConfigMap](fake)
		},
		wantFatal: []string{"the informers did not sync within %[1]v", "configmaps"},
	}, {
		name: "informers that never watch",
		use: func(tb testing.TB, timeout time.Duration, _ <-chan struct{}) {
			fake := generictest.New(tb, scheme.Scheme, generictest.Timeout(timeout))
			fake.Dynamic().PrependWatchReactor("configmaps", func(clienttesting.Action) (bool, watch.Interface, error) {
				return true, nil, errors.New("the watch is down")
			})
			generictest.NewInformer[*corev1.ConfigMap](fake)
		},
		wantFatal: []string{"the informers did not start watching within %[1]v; no watch of /v1, Resource=configmaps in all namespaces (an informer's)"},
	}, {
		// The typed informer's watch of the same resource is no watch of
		// the unstructured informer's: a delete made before the latter
		// opens would never reach it.
		name: "a second informer of a resource that never watches",
		use: func(tb testing.TB, timeout time.Duration, _ <-chan struct{}) {
			fake := generictest.New(tb, scheme.Scheme, generictest.Timeout(timeout))
			var watches atomic.Int32
			fake.Dynamic().PrependWatchReactor("configmaps", func(clienttesting.Action) (bool, watch.Interface, error) {
				if watches.Add(1) == 1 {
					return false, nil, nil // the typed informer's, served as usual
				}
				return true, nil, errors.New("the watch is down")
			})
			generictest.NewInformer[*corev1.ConfigMap](fake)
			generictest.NewUnstructuredInformer(fake, schema.GroupVersionResource{Version: "v1", Resource: "configmaps"})
		},
		wantFatal: []string{"the informers did not start watching within %[1]v; no watch of /v1, Resource=configmaps in all namespaces (an informer's)"},
	}, {
		name: "a new handler that never takes the cached objects",
		use: func(tb testing.TB, timeout time.Duration, release <-chan struct{}) {
			fake := generictest.New(tb, scheme.Scheme, generictest.Timeout(timeout), generictest.Objects(settings()))
			configMaps := generictest.NewInformer[*corev1.ConfigMap](fake)
			if _, err := configMaps.AddEventHandler(blockingHandler{release}); err != nil {
				tb.Fatal(err)
			}
		},
		wantFatal: []string{"the new handler of /v1, Resource=configmaps did not receive the cached objects within %[1]v; it has 0 of them"},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			for timeout := firstTimeout; ; timeout *= 2 {
				tb := &boundedTB{TB: t}
				if tc.deadline {
					tb.deadline = time.Now().Add(deadlineMargin + timeout)
				}
				release := make(chan struct{})
				tb.run(func() { tc.use(tb, timeout, release) })
				close(release)
				tb.runCleanups()

				msg := tb.message()
				if retryWithLongerBound(t, msg, tc.wantFatal, timeout) {
					continue
				}
				if tc.deadline {
					if bound, ok := namedBound(msg); !ok || bound > timeout {
						t.Errorf("failed with:\n%s\nwant it to name a bound of at most %v, what was left before the test's deadline", msg, timeout)
					}
				}
				return
			}
		})
	}
}

// TestShutdownEndsAtTheTimeout: a handler that never returns fails the test
// when the Fake shuts its informers down, instead of holding the test.
func TestShutdownEndsAtTheTimeout(t *testing.T) {
	for timeout := firstTimeout; ; timeout *= 2 {
		tb := &boundedTB{TB: t}
		release := make(chan struct{})
		tb.run(func() {
			fake := generictest.New(tb, scheme.Scheme, generictest.Timeout(timeout))
			configMaps := generictest.NewInformer[*corev1.ConfigMap](fake)
			if _, err := configMaps.AddEventHandler(blockingHandler{release}); err != nil {
				tb.Fatal(err)
			}
			// The change itself times out, blocked too: the shutdown is next.
			fake.Create(settings())
		})
		changeFailed := "handlers did not see the change within " + timeout.String()
		if first := tb.message(); !strings.Contains(first, changeFailed) {
			close(release)
			tb.runCleanups()
			if setUpFailed(first, changeFailed) && timeout < maxTimeout {
				t.Logf("the set-up did not fit a bound of %v: %s", timeout, first)
				continue
			}
			t.Fatalf("the change failed with %q, want a failure saying %q", first, changeFailed)
		}
		tb.mu.Lock()
		tb.fatal = ""
		tb.mu.Unlock()
		tb.runCleanups()
		close(release) // the shutdown ends, late, and leaves no goroutine

		checkFatal(t, tb.message(), []string{"the informers did not shut down within " + timeout.String() + ": a handler has not returned"})
		return
	}
}

// retryWithLongerBound checks the failure msg of a run bounded by
// timeout against wantFatal (whose "%[1]v" stands for the bound), and
// reports whether to run again with a longer bound instead: the set-up,
// not the wait under test, did not fit the bound.
func retryWithLongerBound(t *testing.T, msg string, wantFatal []string, timeout time.Duration) bool {
	t.Helper()
	want := make([]string, len(wantFatal))
	for i, w := range wantFatal {
		want[i] = strings.ReplaceAll(w, "%[1]v", timeout.String())
	}
	if setUpFailed(msg, want[0]) && timeout < maxTimeout {
		t.Logf("the set-up did not fit a bound of %v: %s", timeout, msg)
		return true
	}
	checkFatal(t, msg, want)
	return false
}

func checkFatal(t *testing.T, got string, want []string) {
	t.Helper()
	if got == "" {
		t.Fatalf("the wait did not fail, want a failure saying %q", want)
	}
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("failed with:\n%s\nwant it to say %q", got, w)
		}
	}
}
