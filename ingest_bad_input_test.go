package generic_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/internal/widget"
)

// burstListerWatcher lists list once, then serves one watch, fed by the
// test; later requests fail, so nothing but the burst reaches the cache.
type burstListerWatcher struct {
	list    runtime.Object
	watcher *watch.FakeWatcher
	mu      sync.Mutex
	listed  bool
	watched bool
}

func newBurstListerWatcher(list runtime.Object, events int) *burstListerWatcher {
	return &burstListerWatcher{list: list, watcher: watch.NewFakeWithChanSize(events, false)}
}

func (lw *burstListerWatcher) IsWatchListSemanticsUnSupported() bool { return true }

func (lw *burstListerWatcher) List(metav1.ListOptions) (runtime.Object, error) {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	if lw.listed {
		return nil, errScriptEnded
	}
	lw.listed = true
	return lw.list, nil
}

func (lw *burstListerWatcher) Watch(metav1.ListOptions) (watch.Interface, error) {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	if lw.watched {
		return nil, errScriptEnded
	}
	lw.watched = true
	return lw.watcher, nil
}

// instantiation is one kind of T with its way to the cache: the converter
// the source's objects go through, a good object of a given size, the bad
// form of an object as that source would deliver it, and how to read the
// size back from a T.
type instantiation[T generic.Object] struct {
	convert generic.Converter[T]
	good    func(namespace, name string, size int) runtime.Object
	bad     func(namespace, name string) runtime.Object
	size    func(T) string
}

// undecodable is what a per-item decoding source delivers for an object
// that did not decode.
func undecodable(namespace, name string) runtime.Object {
	return &generic.Undecodable{GVK: widget.GVK, Namespace: namespace, Name: name, Raw: []byte(`{"spec":{"size":"big"}}`),
		Err: errors.New(`json: cannot unmarshal string into Go struct field Spec.spec.size of type int64`)}
}

func unstructuredWidget(namespace, name string, size any) *unstructured.Unstructured {
	u := newWidget(namespace, name, size)
	u.SetResourceVersion("1")
	return u
}

var (
	// unstructuredInstantiation: the dynamic client's *Unstructured,
	// undecodable only as a source that decodes per item reports it.
	unstructuredInstantiation = instantiation[*unstructured.Unstructured]{
		good: func(ns, name string, size int) runtime.Object { return unstructuredWidget(ns, name, int64(size)) },
		bad:  undecodable,
		size: func(u *unstructured.Unstructured) string {
			size, _, _ := unstructured.NestedInt64(u.Object, "spec", "size")
			return strconv.FormatInt(size, 10)
		},
	}
	// typedViewInstantiation: *Widget converted from the dynamic client's
	// *Unstructured, which fails on a string size.
	typedViewInstantiation = instantiation[*widget.Widget]{
		convert: generic.FromUnstructured[*widget.Widget](),
		good:    func(ns, name string, size int) runtime.Object { return unstructuredWidget(ns, name, int64(size)) },
		bad:     func(ns, name string) runtime.Object { return unstructuredWidget(ns, name, "big") },
		size:    func(w *widget.Widget) string { return strconv.Itoa(int(w.Spec.Size)) },
	}
	// typedRESTInstantiation: *Widget decoded by a typed REST client, which
	// delivers an Undecodable for a Widget that does not decode.
	typedRESTInstantiation = instantiation[*widget.Widget]{
		good: func(ns, name string, size int) runtime.Object {
			return &widget.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, ResourceVersion: "1"}, Spec: widget.Spec{Size: int32(size)}}
		},
		bad:  undecodable,
		size: func(w *widget.Widget) string { return strconv.Itoa(int(w.Spec.Size)) },
	}
	// metadataInstantiation: *PartialObjectMetadata from the metadata
	// client; the size rides in an annotation.
	metadataInstantiation = instantiation[*metav1.PartialObjectMetadata]{
		good: func(ns, name string, size int) runtime.Object {
			return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, ResourceVersion: "1",
				Annotations: map[string]string{"size": strconv.Itoa(size)}}}
		},
		bad:  undecodable,
		size: func(m *metav1.PartialObjectMetadata) string { return m.Annotations["size"] },
	}
)

// TestBurstOfObjectsTurningBad: 200 objects, each added and at once updated
// to a state that does not decode (even ones) or deleted with a final state
// that does not decode (odd ones), in one burst, on every instantiation.
// The even ones stay in the cache at their last good state, marked stale
// (Status.Stale), and reach no handler as deleted: the server still has
// them (issue 45: a made-up delete makes a controller clean up what still
// exists). The odd ones leave as a delete that carries their last good
// state. Each bad state is reported with its key. The ingest reads the last
// good states from its own record, never from the cache, which lags the
// queue.
func TestBurstOfObjectsTurningBad(t *testing.T) {
	tests := []struct {
		name string
		run  func(t *testing.T)
	}{
		{name: "unstructured", run: func(t *testing.T) { testBurst(t, unstructuredInstantiation) }},
		{name: "typed view of a dynamic feed", run: func(t *testing.T) { testBurst(t, typedViewInstantiation) }},
		{name: "typed REST", run: func(t *testing.T) { testBurst(t, typedRESTInstantiation) }},
		{name: "metadata", run: func(t *testing.T) { testBurst(t, metadataInstantiation) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, tc.run)
	}
}

const burstObjects = 200

func testBurst[T generic.Object](t *testing.T, kind instantiation[T]) {
	lw := newBurstListerWatcher(&metainternalversion.List{ListMeta: metav1.ListMeta{ResourceVersion: "1"}}, 2*burstObjects)
	var rejected sync.Map
	informer := newInformer(lw, widget.GVR, kind.convert, generic.WithErrorHandler(func(_ context.Context, err error) {
		var conversion *generic.ConversionError
		if errors.As(err, &conversion) {
			rejected.Store(conversion.Key, true)
		}
	}))
	rec := newRecorder(kind.size)
	if _, err := informer.AddEventHandler(rec); err != nil {
		t.Fatal(err)
	}
	defer runSynced(t, informer)()

	want := map[string][]event{}
	var wantCached []string
	for i := range burstObjects {
		name := fmt.Sprintf("w-%03d", i)
		key := "burst/" + name
		size := strconv.Itoa(i + 1)
		lw.watcher.Add(kind.good("burst", name, i+1))
		if i%2 == 0 {
			lw.watcher.Modify(kind.bad("burst", name))
			want[key] = []event{{Verb: "ADDED", Key: key, Last: size}}
			wantCached = append(wantCached, key)
		} else {
			lw.watcher.Delete(kind.bad("burst", name))
			want[key] = []event{{Verb: "ADDED", Key: key, Last: size}, {Verb: "DELETED", Key: key, Last: size}}
		}
	}
	got := map[string][]event{}
	for _, e := range rec.next(t, burstObjects+burstObjects/2) {
		got[e.Key] = append(got[e.Key], e)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events per object (-want +got):\n%s", diff)
	}
	cached, err := informer.Lister().List(labels.Everything())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wantCached, keysOf(t, cached)); diff != "" {
		t.Errorf("objects in the cache (-want +got):\n%s", diff)
	}
	for _, obj := range cached {
		var i int
		if _, err := fmt.Sscanf(obj.GetName(), "w-%d", &i); err != nil || kind.size(obj) != strconv.Itoa(i+1) {
			t.Errorf("%s is cached at size %s, want its last good size %d", obj.GetName(), kind.size(obj), i+1)
		}
	}
	status := informer.Status()
	var staleKeys []string
	for _, o := range generic.StaleObjects(informer) {
		staleKeys = append(staleKeys, o.Key)
	}
	if status.Stale != burstObjects/2 {
		t.Errorf("Status.Stale = %d, want %d", status.Stale, burstObjects/2)
	}
	if diff := cmp.Diff(wantCached, staleKeys); diff != "" {
		t.Errorf("StaleObjects (-want +got):\n%s", diff)
	}
	waitUntil(t, "every bad object reported with its key", func() bool {
		n := 0
		rejected.Range(func(any, any) bool { n++; return true })
		return n == burstObjects
	})
}

// TestNilObjectsFromASource is the defect "a nil object from a Source
// crashes the process": a typed-nil *Unstructured as a list item and in a
// watch event, with Identity and with FromUnstructured, is reported and
// skipped; the other objects are served.
func TestNilObjectsFromASource(t *testing.T) {
	tests := []struct {
		name string
		run  func(t *testing.T)
	}{
		{name: "Identity", run: func(t *testing.T) { testNilObjects(t, unstructuredInstantiation) }},
		{name: "FromUnstructured", run: func(t *testing.T) { testNilObjects(t, typedViewInstantiation) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, tc.run)
	}
}

func testNilObjects[T generic.Object](t *testing.T, kind instantiation[T]) {
	var nilObject *unstructured.Unstructured
	list := &metainternalversion.List{
		ListMeta: metav1.ListMeta{ResourceVersion: "1"},
		Items:    []runtime.Object{nilObject, kind.good("team-a", "listed", 1)},
	}
	lw := newBurstListerWatcher(list, 10)
	reported := make(chan error, 10)
	informer := newInformer(lw, widget.GVR, kind.convert, generic.WithErrorHandler(func(_ context.Context, err error) { reported <- err }))
	rec := newRecorder(kind.size)
	if _, err := informer.AddEventHandler(rec); err != nil {
		t.Fatal(err)
	}
	defer runSynced(t, informer)()
	lw.watcher.Add(nilObject)
	lw.watcher.Modify(nilObject)
	lw.watcher.Delete(nilObject)
	lw.watcher.Add(kind.good("team-a", "watched", 2))

	want := []event{{Verb: "ADDED", Key: "team-a/listed", Last: "1"}, {Verb: "ADDED", Key: "team-a/watched", Last: "2"}}
	if diff := cmp.Diff(want, rec.next(t, 2)); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	for range 4 {
		var conversion *generic.ConversionError
		if err := <-reported; !errors.As(err, &conversion) {
			t.Errorf("reported %v, want a *ConversionError", err)
		}
	}
}

// TestNilConverterDropsOtherTypes is the defect "with a nil converter, list
// items of the wrong type are stored and every List then errors": a nil
// converter is Identity[T], whose rejects are reported and skipped.
func TestNilConverterDropsOtherTypes(t *testing.T) {
	list := &metainternalversion.List{
		ListMeta: metav1.ListMeta{ResourceVersion: "1"},
		Items: []runtime.Object{
			&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "intruder"}},
			typedRESTInstantiation.good("team-a", "small", 1),
		},
	}
	reported := make(chan error, 10)
	informer := newInformer[*widget.Widget](newBurstListerWatcher(list, 1), widget.GVR, nil,
		generic.WithErrorHandler(func(_ context.Context, err error) { reported <- err }))
	defer runSynced(t, informer)()

	widgets, err := informer.Lister().List(labels.Everything())
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	if diff := cmp.Diff([]string{"team-a/small"}, keysOf(t, widgets)); diff != "" {
		t.Errorf("cached (-want +got):\n%s", diff)
	}
	var conversion *generic.ConversionError
	if err := <-reported; !errors.As(err, &conversion) || !errors.Is(err, generic.ErrUnexpectedType) || conversion.Key != "team-a/intruder" {
		t.Errorf("reported %v, want a *ConversionError of team-a/intruder wrapping ErrUnexpectedType", err)
	}
}
