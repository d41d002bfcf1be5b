package generic_test

import (
	"context"
	goruntime "runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/cache"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/internal/fixtures"
	"github.com/generic-informers/generic/internal/widget"
)

var (
	podsGVR       = corev1.SchemeGroupVersion.WithResource("pods")
	configMapsGVR = corev1.SchemeGroupVersion.WithResource("configmaps")
	namespacesGVR = corev1.SchemeGroupVersion.WithResource("namespaces")
)

// listKinds tells client-go's fake dynamic client the list kind of each
// resource the tests use.
var listKinds = map[schema.GroupVersionResource]string{
	podsGVR:       "PodList",
	configMapsGVR: "ConfigMapList",
	namespacesGVR: "NamespaceList",
	widget.GVR:    "WidgetList",
}

// load reads fixtures as unstructured objects.
func load(t testing.TB, paths ...string) []*unstructured.Unstructured {
	t.Helper()
	objs, err := fixtures.Load(paths...)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// loadTyped reads fixtures as the scheme's Go types.
func loadTyped(t testing.TB, paths ...string) []runtime.Object {
	t.Helper()
	objs, err := fixtures.Typed(widget.NewScheme(), load(t, paths...))
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// indexerWith returns an informer-style indexer (namespace index included)
// holding objs, plus the extra indexers given.
func indexerWith[T runtime.Object](t testing.TB, objs []T, extra cache.Indexers) cache.Indexer {
	t.Helper()
	indexers := cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}
	for name, fn := range extra {
		indexers[name] = fn
	}
	indexer := cache.NewIndexer(cache.DeletionHandlingMetaNamespaceKeyFunc, indexers)
	for _, obj := range objs {
		if err := indexer.Add(obj); err != nil {
			t.Fatal(err)
		}
	}
	return indexer
}

// only returns the objects of Go type T among objs.
func only[T runtime.Object](objs []runtime.Object) []T {
	var ret []T
	for _, obj := range objs {
		if t, ok := obj.(T); ok {
			ret = append(ret, t)
		}
	}
	return ret
}

// keysOf returns the cache keys of objs, sorted, for order-free comparison.
func keysOf[T runtime.Object](t testing.TB, objs []T) []string {
	t.Helper()
	keys := make([]string, 0, len(objs))
	for _, obj := range objs {
		key, err := cache.MetaNamespaceKeyFunc(obj)
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, key)
	}
	slices.Sort(keys)
	return keys
}

// libraryGoroutines returns the stacks of the goroutines that are running
// this library's root package code, as they are at this instant. Unlike
// goleak, which retries for a while, it does not wait: it checks that
// Shutdown and Release wait themselves for the informers' goroutines (Run,
// the watches' loops, the parked watches) to end. Three kinds of goroutine
// are left out, as their work is done: the Factory's runner after it has
// signalled its informer's end (closing done is its last act),
// goroutines that only were created by this code and have left all of it
// (sync.WaitGroup.Go's wrapper, on its way out); and an informer's
// callbacks goroutine in callbacks.end, its way out, with no call left to
// make (callbacks.wait returns when end has closed drained, its last act;
// CI once caught a goroutine in drain itself, "[runnable]", when wait
// returned before the goroutine's end). The calling test's goroutine is
// left out too.
func libraryGoroutines() []string {
	buf := make([]byte, 1<<20)
	for {
		n := goruntime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	var ours []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		frames := strings.Split(g, "\n")[1:]
		if strings.Contains(g, "testing.tRunner") || len(frames) > 0 && onItsWayOut(frames[0]) {
			continue
		}
		if slices.ContainsFunc(frames, runsLibraryCode) {
			ours = append(ours, g)
		}
	}
	return ours
}

// callbacksEnd and callbacksDrain start the frames of an informer's
// callbacks goroutine on its way out, once its Queue's Wait has returned:
// in end, which closes its drained channel as its last act, or back in
// drain with only its return left. Under -race on a loaded machine the
// goroutine may be preempted there for a while (hack/stress.sh saw one
// runnable at drain's return when Shutdown had returned); goleak, which
// retries, sees it gone.
const (
	callbacksEnd   = "github.com/generic-informers/generic/internal/callbacks.(*Queue).end("
	callbacksDrain = "github.com/generic-informers/generic/internal/callbacks.(*Queue).drain("
)

// onItsWayOut reports whether a goroutine whose top frame is frame is an
// informer's callbacks goroutine on its way out (see callbacksEnd). A drain
// goroutine still at work has another frame on top: the call it makes, or
// the lock it waits for.
func onItsWayOut(frame string) bool {
	return strings.HasPrefix(frame, callbacksEnd) || strings.HasPrefix(frame, callbacksDrain)
}

// runsLibraryCode reports whether a line of a goroutine's stack is a frame
// of a function of the root package or of its internal packages, other
// than the Factory's runner. Root package functions are
// "module.(*type).method" or "module.function".
func runsLibraryCode(line string) bool {
	if strings.HasPrefix(line, "\t") || strings.HasPrefix(line, "created by ") {
		return false
	}
	ours := strings.Contains(line, "github.com/generic-informers/generic.") ||
		strings.Contains(line, "github.com/generic-informers/generic/internal/")
	return ours && !strings.Contains(line, "registry.(*Registry[...]).runLocked.func1(")
}

// waitForNoLibraryGoroutines waits, bounded, until no goroutine runs the
// library's code (libraryGoroutines), and fails the test if one is left.
func waitForNoLibraryGoroutines(t *testing.T, when string) {
	t.Helper()
	var left []string
	err := wait.PollUntilContextTimeout(context.Background(), 10*time.Millisecond, boundedWait, true,
		func(context.Context) (bool, error) {
			left = libraryGoroutines()
			return len(left) == 0, nil
		})
	if err != nil {
		t.Fatalf("goroutines of the library %v %s (-want +got):\n%s", boundedWait, when, cmp.Diff([]string(nil), left))
	}
}

// newFactory is generic.NewFactory for Options that are valid: an error
// is a broken test, and panics.
func newFactory[T generic.Object](source generic.Source, convert generic.Converter[T], opts ...generic.FactoryOption) *generic.Factory[T] {
	factory, err := generic.NewFactory(source, convert, opts...)
	if err != nil {
		panic(err)
	}
	return factory
}

// acquire is factory.Acquire for Options that are valid: an error is a
// broken test, and panics. It takes a hold the test does not release: the
// factory's Shutdown stops the informer.
func acquire[T generic.Object](factory *generic.Factory[T], gvr schema.GroupVersionResource, opts ...generic.InformerOption) generic.Handle[T] {
	handle, err := factory.Acquire(gvr, opts...)
	if err != nil {
		panic(err)
	}
	return handle
}

// newInformer is generic.NewInformer for Options that are valid: an error
// is a broken test, and panics.
func newInformer[T generic.Object](lw cache.ListerWatcher, gvr schema.GroupVersionResource, convert generic.Converter[T], opts ...generic.InformerOption) generic.Informer[T] {
	informer, err := generic.NewInformer(lw, gvr, convert, opts...)
	if err != nil {
		panic(err)
	}
	return informer
}

// asFactoryOptions are informer options given to a factory, for tests that
// give the same options to both.
func asFactoryOptions(opts []generic.InformerOption) []generic.FactoryOption {
	all := make([]generic.FactoryOption, len(opts))
	for i, opt := range opts {
		all[i] = opt
	}
	return all
}
