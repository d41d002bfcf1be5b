package ctrlcache

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/sharding"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/ctrlcache"
	"github.com/generic-informers/generic/e2e/apiserver"
)

// Read your writes through controller-runtime's own consistent client
// (client.CacheOptions.EnableReadYourWritesConsistency): after a write,
// its Get and List wait until the cache's informer has told the client's
// handler of the write's resourceVersion or a later one.
//
// Timing: kube-apiserver sends a bookmark on each watch once a minute
// (k8s.io/apiserver pkg/storage/cacher: defaultBookmarkFrequency), so a
// wait that ends at a bookmark ends within about a minute, and one that
// needs an event that never comes lasts until its context ends.
const (
	// bookmarkedRead bounds a read that may wait for the next bookmark:
	// three of kube-apiserver's minutes between bookmarks.
	bookmarkedRead = 3 * time.Minute
	// eventRead bounds a read whose wait an event of the informer, or a
	// filtered one, ends: far below the minute between bookmarks, far
	// above what it takes on a loaded machine (milliseconds).
	eventRead = 20 * time.Second
	// shortWatch is the timeout, in seconds, of the watches of
	// shortWatchSelection's cache; shortWatchRead bounds a read that may
	// wait for their next bookmark (kube-apiserver sends one 2 s before a
	// watch ends): half a minute, a third of what a read may wait for a
	// bookmark otherwise.
	shortWatch     = 10
	shortWatchRead = 30 * time.Second
	// hangingRead bounds a read on controller-runtime's cache shown to
	// wait for an event that never comes: longer than a bookmark period,
	// so that a bookmark would have ended it.
	hangingRead = 75 * time.Second
)

// rywSelection is a cache that holds part of the ConfigMaps: those of a
// label, a namespace or a shard.
type rywSelection struct {
	name string
	// newCache makes the cache, selecting namespace sel (and the label
	// ryw=sel) of the namespaces sel and other.
	newCache func(config *rest.Config, sel string) (crcache.Cache, error)
	// inside and outside are ConfigMaps to create in and outside the
	// selection, before the server gives them a UID.
	inside, outside func(sel, other, name string) *corev1.ConfigMap
	// selected reports whether the cache holds cm as the server wrote it.
	selected func(cm *corev1.ConfigMap, sel string) bool
	// getOutside is what a Get of an object outside the selection answers
	// once it has waited: NotFound, or controller-runtime's error for a
	// namespace the cache does not hold.
	getOutside func(err error) bool
}

func configMap(namespace, name, label string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: map[string]string{"ryw": label}},
		Data:       map[string]string{"v": "0"},
	}
}

func byLabel(sel string) crcache.Options {
	return crcache.Options{DefaultLabelSelector: labels.SelectorFromSet(labels.Set{"ryw": sel})}
}

// firstShard is the shard of the sharded caches: 0 of 2.
var firstShard = func() sharding.Selector {
	s, err := sharding.NewShardRangeSelector("object.metadata.uid", 0, 2)
	if err != nil {
		panic(err)
	}
	return s
}()

var (
	labelSelection = rywSelection{
		name: "label selector",
		newCache: func(config *rest.Config, sel string) (crcache.Cache, error) {
			return ctrlcache.New(config, byLabel(sel))
		},
		inside:     func(sel, _, name string) *corev1.ConfigMap { return configMap(sel, name, sel) },
		outside:    func(sel, _, name string) *corev1.ConfigMap { return configMap(sel, name, "elsewhere") },
		selected:   func(cm *corev1.ConfigMap, sel string) bool { return cm.Labels["ryw"] == sel },
		getOutside: apierrors.IsNotFound,
	}
	namespaceSelection = rywSelection{
		name: "namespace",
		newCache: func(config *rest.Config, sel string) (crcache.Cache, error) {
			return ctrlcache.New(config, crcache.Options{DefaultNamespaces: map[string]crcache.Config{sel: {}}})
		},
		inside:   func(sel, _, name string) *corev1.ConfigMap { return configMap(sel, name, sel) },
		outside:  func(_, other, name string) *corev1.ConfigMap { return configMap(other, name, other) },
		selected: func(cm *corev1.ConfigMap, sel string) bool { return cm.Namespace == sel },
		getOutside: func(err error) bool {
			return err != nil && strings.Contains(err.Error(), "unknown namespace for the cache")
		},
	}
	shardSelection = rywSelection{
		name: "shard",
		newCache: func(config *rest.Config, sel string) (crcache.Cache, error) {
			return ctrlcache.BuilderWithOptions(ctrlcache.Options{Factory: []generic.FactoryOption{generic.WithShard(0, 2)}})(config, byLabel(sel))
		},
		inside:  func(sel, _, name string) *corev1.ConfigMap { return configMap(sel, name, sel) },
		outside: func(sel, _, name string) *corev1.ConfigMap { return configMap(sel, name, sel) },
		selected: func(cm *corev1.ConfigMap, sel string) bool {
			in, err := firstShard.Matches(cm)
			return cm.Labels["ryw"] == sel && in && err == nil
		},
		getOutside: apierrors.IsNotFound,
	}
	// shortWatchSelection is labelSelection on a cache whose watches end
	// every shortWatch seconds, so that bookmarks come that often.
	shortWatchSelection = rywSelection{
		name: "label selector, short watches",
		newCache: func(config *rest.Config, sel string) (crcache.Cache, error) {
			return shortWatchCache(config, byLabel(sel), shortWatch)
		},
		inside:     labelSelection.inside,
		outside:    labelSelection.outside,
		selected:   labelSelection.selected,
		getOutside: apierrors.IsNotFound,
	}
	// controllerRuntimeSelection is labelSelection on controller-runtime's
	// own cache, for comparison.
	controllerRuntimeSelection = rywSelection{
		name: "controller-runtime's cache, label selector",
		newCache: func(config *rest.Config, sel string) (crcache.Cache, error) {
			return crcache.New(config, byLabel(sel))
		},
		inside:     labelSelection.inside,
		outside:    labelSelection.outside,
		selected:   labelSelection.selected,
		getOutside: apierrors.IsNotFound,
	}
)

// shortWatchCache is ctrlcache's cache of opts whose watches end every
// seconds (the first one, which streams the objects the informer syncs
// from, included), as docs/controller-runtime.md shows it: kube-apiserver
// sends a bookmark 2 s before a watch ends, and the reflector watches again
// from where it was.
func shortWatchCache(config *rest.Config, opts crcache.Options, seconds int64) (crcache.Cache, error) {
	newCache := ctrlcache.BuilderWithOptions(ctrlcache.Options{Informer: []generic.InformerOption{
		generic.WithTweakListOptions(func(o *metav1.ListOptions) {
			if o.Watch {
				o.TimeoutSeconds = ptr.To(seconds)
			}
		}),
	}})
	return newCache(config, opts)
}

// rywFixture is a started cache of a selection, a consistent client reading
// through it, and the namespaces it writes in.
type rywFixture struct {
	sel, other string
	selection  rywSelection
	client     client.Client
	// held is name=resourceVersion of each ConfigMap create made that the
	// selection holds.
	held map[string]string
}

func newRYWFixture(t *testing.T, config *rest.Config, selection rywSelection) *rywFixture {
	t.Helper()
	f := &rywFixture{sel: namespaceOn(t, config), other: namespaceOn(t, config), selection: selection, held: map[string]string{}}
	c, err := selection.newCache(config, f.sel)
	if err != nil {
		t.Fatal(err)
	}
	startCache(t, c)
	f.client, err = client.New(config, client.Options{Cache: &client.CacheOptions{
		Reader: c, EnableReadYourWritesConsistency: ptr.To(true),
	}})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// namespaceOn makes a namespace of the test's own on the server of config.
func namespaceOn(t *testing.T, config *rest.Config) string {
	t.Helper()
	cl, err := client.New(config, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "ryw-"}}
	if err := cl.Create(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

// create creates ConfigMaps name-0, name-1, ... through the consistent
// client, with opts (inside or outside the selection) until the server has written
// one the selection holds (want true) or does not (want false), and
// returns it: the last write, so that no event of the informer passes it.
// A shard needs a few: the UID the server gives decides.
func (f *rywFixture) create(t *testing.T, name string, want bool, opts ...client.CreateOption) *corev1.ConfigMap {
	t.Helper()
	template := f.selection.outside
	if want {
		template = f.selection.inside
	}
	for i := range 20 {
		cm := template(f.sel, f.other, fmt.Sprintf("%s-%d", name, i))
		if err := f.client.Create(context.Background(), cm, opts...); err != nil {
			t.Fatal(err)
		}
		selected := f.selection.selected(cm, f.sel)
		if selected {
			f.held[cm.Name] = cm.ResourceVersion
		}
		if selected == want {
			return cm
		}
	}
	t.Fatalf("20 ConfigMaps created, none with selected = %v", want)
	return nil
}

// get reads key through the consistent client, bounded by timeout, and
// says how long it took.
func (f *rywFixture) get(key client.ObjectKey, timeout time.Duration) (*corev1.ConfigMap, time.Duration, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	start := time.Now()
	got := &corev1.ConfigMap{}
	err := f.client.Get(ctx, key, got)
	return got, time.Since(start), err
}

// list lists the selected namespace through the consistent client, bounded
// by timeout, and returns name=resourceVersion of each ConfigMap.
func (f *rywFixture) list(timeout time.Duration) (map[string]string, time.Duration, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	start := time.Now()
	list := &corev1.ConfigMapList{}
	err := f.client.List(ctx, list, client.InNamespace(f.sel))
	got := map[string]string{}
	for _, cm := range list.Items {
		got[cm.Name] = cm.ResourceVersion
	}
	return got, time.Since(start), err
}

// TestReadYourWritesOutsideSelection creates a ConfigMap outside a cache's
// selection through controller-runtime's consistent client and reads it
// back: the server sends the cache's informer no event of it, so the
// client's wait for the write's resourceVersion can end only with the
// informer's next event of another object, which on a quiet selection
// never comes, or, on this backend, with the next watch bookmark the
// informer's store applies (within about a minute; within shortWatch
// seconds with watches that end that often). A Get must answer as the
// selection does (NotFound), and a List of the selection, whose wait is
// for every write of the kind, must not wait either. On
// controller-runtime's own cache the read waits until its context ends:
// the problem this backend solves.
//
// A delete outside the selection is waited for as a write: kube-apiserver
// 1.38 answers a DELETE with the delete's resourceVersion (in the object,
// or in the Status of one removed from storage), and the consistent client
// then waits for that resourceVersion, not for the informer's delete event
// (which never comes; older servers answer no resourceVersion: see
// docs/controller-runtime.md). Writes made with
// client.DisableReadYourWritesConsistency are not waited for.
//
// The cases run at once: the test takes about hangingRead.
func TestReadYourWritesOutsideSelection(t *testing.T) {
	tests := []struct {
		name      string
		selection rywSelection
		// delete: the object created is then deleted; optOut: both writes
		// with client.DisableReadYourWritesConsistency.
		delete, optOut bool
		timeout        time.Duration
		// hangs: the read waits until its context ends.
		hangs bool
	}{
		{name: "label selector", selection: labelSelection, timeout: bookmarkedRead},
		{name: "namespace", selection: namespaceSelection, timeout: bookmarkedRead},
		{name: "shard", selection: shardSelection, timeout: bookmarkedRead},
		{name: "label selector, short watches", selection: shortWatchSelection, timeout: shortWatchRead},
		{name: "controller-runtime's cache, label selector", selection: controllerRuntimeSelection, timeout: hangingRead, hangs: true},
		{name: "label selector, a delete", selection: labelSelection, delete: true, timeout: bookmarkedRead},
		{name: "label selector, a delete, opted out", selection: labelSelection, delete: true, optOut: true, timeout: eventRead},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newRYWFixture(t, server.Config, tc.selection)
			var opts []client.CreateOption
			var deleteOpts []client.DeleteOption
			if tc.optOut {
				opts = append(opts, client.DisableReadYourWritesConsistency)
				deleteOpts = append(deleteOpts, client.DisableReadYourWritesConsistency)
			}
			cm := f.create(t, "outside", false, opts...)
			if tc.delete {
				if err := f.client.Delete(context.Background(), cm, deleteOpts...); err != nil {
					t.Fatal(err)
				}
			}
			_, took, err := f.get(client.ObjectKeyFromObject(cm), tc.timeout)
			t.Logf("Get of %s, written outside the selection at resourceVersion %s, answered after %v: %v", cm.Name, cm.ResourceVersion, took, err)
			if tc.hangs {
				if !errors.Is(err, context.DeadlineExceeded) {
					t.Fatalf("Get: %v, want it to wait until its context ends", err)
				}
				return
			}
			if !tc.selection.getOutside(err) {
				t.Fatalf("Get of an object outside the selection: %v", err)
			}
			got, took, err := f.list(tc.timeout)
			t.Logf("List then answered after %v", took)
			if err != nil {
				t.Fatalf("List: %v", err)
			}
			if diff := cmp.Diff(f.held, got); diff != "" {
				t.Errorf("List of the selection: the objects created inside it (-want +got):\n%s", diff)
			}
		})
	}
}

// TestReadYourWritesOutsideShardFilteredByClient is the shard case of
// TestReadYourWritesOutsideSelection on a server without the
// ShardedListAndWatch gate: the informer gets the event of every object and
// filters it out, and its store's resourceVersion moves with it, so the
// read waits no bookmark. Three writes in a row, each read within
// eventRead: a bookmark (one a minute) can have ended at most one wait.
//
// Not parallel: the test servers share this process's feature gates, so
// while it runs every server of the process has the gate off.
func TestReadYourWritesOutsideShardFilteredByClient(t *testing.T) {
	gateOff := apiserver.StartForTest(t, "--feature-gates=ShardedListAndWatch=false")
	f := newRYWFixture(t, gateOff.Config, shardSelection)
	for i := range 3 {
		cm := f.create(t, fmt.Sprintf("outside-%d", i), false)
		_, took, err := f.get(client.ObjectKeyFromObject(cm), eventRead)
		t.Logf("write %d: Get answered after %v: %v", i, took, err)
		if !apierrors.IsNotFound(err) {
			t.Fatalf("write %d: Get of an object outside the shard: %v, want NotFound", i, err)
		}
	}
}

// TestReadYourWritesInSelection holds the consistent client's promise for
// writes inside the selection, on this backend as on controller-runtime's
// cache: after a create, an update, an update that moves the object out of
// the selection (a label) or back, and a delete, a Get and a List see the
// write (or NotFound) at once, the informer's event ending the wait.
func TestReadYourWritesInSelection(t *testing.T) {
	tests := []struct {
		selection rywSelection
		// movable: a label update moves the object out of the selection.
		movable bool
	}{
		{labelSelection, true},
		{namespaceSelection, false},
		{shardSelection, false},
		{controllerRuntimeSelection, true},
	}
	for _, tc := range tests {
		t.Run(tc.selection.name, func(t *testing.T) {
			f := newRYWFixture(t, server.Config, tc.selection)
			ctx := context.Background()
			cm := f.create(t, "inside", true)
			f.expect(t, "create", cm, true)

			cm.Data["v"] = "1"
			if err := f.client.Update(ctx, cm); err != nil {
				t.Fatal(err)
			}
			f.expect(t, "update", cm, true)

			if tc.movable {
				cm.Labels["ryw"] = "elsewhere"
				if err := f.client.Update(ctx, cm); err != nil {
					t.Fatal(err)
				}
				f.expect(t, "update out of the selection", cm, false)
				cm.Labels["ryw"] = f.sel
				if err := f.client.Update(ctx, cm); err != nil {
					t.Fatal(err)
				}
				f.expect(t, "update back into the selection", cm, true)
			}

			if err := f.client.Delete(ctx, cm); err != nil {
				t.Fatal(err)
			}
			f.expect(t, "delete", cm, false)
		})
	}
}

// expect reads cm back through the consistent client, by Get and List,
// each within eventRead: at its written resourceVersion if held, else
// NotFound and not listed.
func (f *rywFixture) expect(t *testing.T, write string, cm *corev1.ConfigMap, held bool) {
	t.Helper()
	got, took, err := f.get(client.ObjectKeyFromObject(cm), eventRead)
	t.Logf("%s: Get answered after %v", write, took)
	switch {
	case held && err != nil:
		t.Fatalf("%s: Get: %v", write, err)
	case held:
		if diff := cmp.Diff([]any{cm.ResourceVersion, cm.Data}, []any{got.ResourceVersion, got.Data}); diff != "" {
			t.Errorf("%s: Get's resourceVersion and data (-want +got):\n%s", write, diff)
		}
	case !apierrors.IsNotFound(err):
		t.Fatalf("%s: Get: %v, want NotFound", write, err)
	}
	listed, took, err := f.list(eventRead)
	t.Logf("%s: List answered after %v", write, took)
	if err != nil {
		t.Fatalf("%s: List: %v", write, err)
	}
	want := map[string]string{}
	if held {
		want[cm.Name] = cm.ResourceVersion
	}
	if diff := cmp.Diff(want, listed); diff != "" {
		t.Errorf("%s: List (-want +got):\n%s", write, diff)
	}
}
