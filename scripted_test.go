package generic_test

import (
	"context"
	"errors"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
)

// scriptedListerWatcher plays a script: each List returns the next list, each
// Watch the next watcher. It lets a test break a watch and decide what the
// relist finds, which is how tombstones come about.
type scriptedListerWatcher struct {
	lists   chan runtime.Object
	watches chan *watch.RaceFreeFakeWatcher
	// watching receives each watcher as the reflector starts using it.
	watching chan *watch.RaceFreeFakeWatcher
}

func newScriptedListerWatcher(lists ...runtime.Object) *scriptedListerWatcher {
	lw := &scriptedListerWatcher{
		lists:    make(chan runtime.Object, len(lists)),
		watches:  make(chan *watch.RaceFreeFakeWatcher, len(lists)),
		watching: make(chan *watch.RaceFreeFakeWatcher, len(lists)),
	}
	for _, list := range lists {
		lw.lists <- list
		lw.watches <- watch.NewRaceFreeFake()
	}
	return lw
}

var errScriptEnded = errors.New("script ended")

// IsWatchListSemanticsUnSupported makes the reflector list, then watch.
func (lw *scriptedListerWatcher) IsWatchListSemanticsUnSupported() bool { return true }

func (lw *scriptedListerWatcher) List(metav1.ListOptions) (runtime.Object, error) {
	select {
	case list := <-lw.lists:
		return list, nil
	default:
		return nil, errScriptEnded
	}
}

func (lw *scriptedListerWatcher) Watch(metav1.ListOptions) (watch.Interface, error) {
	select {
	case w := <-lw.watches:
		lw.watching <- w
		return w, nil
	default:
		return nil, errScriptEnded
	}
}

// nextWatch returns the watcher the reflector watches next, once it does.
func (lw *scriptedListerWatcher) nextWatch(t *testing.T) *watch.RaceFreeFakeWatcher {
	t.Helper()
	ctx, cancel := testContext(t)
	defer cancel()
	select {
	case w := <-lw.watching:
		return w
	case <-ctx.Done():
		t.Fatal("the reflector did not watch before the deadline")
		return nil
	}
}

// expire ends the current watch with 410 Gone, as the API server does when
// the watched resourceVersion has been compacted away: the reflector relists.
func expire(w *watch.RaceFreeFakeWatcher) {
	w.Error(&metav1.Status{
		Status: metav1.StatusFailure, Code: 410, Reason: metav1.StatusReasonExpired,
		Message: "too old resource version",
	})
}

// unstructuredList returns objs as one list at resourceVersion.
func unstructuredList(resourceVersion string, objs ...*unstructured.Unstructured) *unstructured.UnstructuredList {
	list := &unstructured.UnstructuredList{Object: map[string]any{"apiVersion": "v1", "kind": "List"}}
	list.SetResourceVersion(resourceVersion)
	for _, obj := range objs {
		list.Items = append(list.Items, *obj.DeepCopy())
	}
	return list
}

func runInformer(t *testing.T, run func(context.Context)) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		run(ctx)
	}()
	return func() {
		cancel()
		<-done
	}
}

// runSynced runs informer as runInformer does and fails the test unless it
// syncs before the test's deadline.
func runSynced(t *testing.T, informer interface {
	Run(context.Context)
	HasSynced() bool
}) (stop func()) {
	t.Helper()
	stop = runInformer(t, informer.Run)
	if !cache.WaitForCacheSync(testDone(t), informer.HasSynced) {
		stop()
		t.Fatal("not synced")
	}
	return stop
}
