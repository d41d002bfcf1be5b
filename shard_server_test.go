package generic_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/internal/shardcheck"
)

// shardServer is a fake API server of ConfigMaps for the sharding and
// read-your-writes tests: lists and watches (from a resourceVersion,
// replaying its event log) in a namespace or all, with a label selector as
// kube-apiserver applies it (an object modified out of it is a DELETED
// event, into it an ADDED one), and, when honours is set, the
// ShardSelector as kube-apiserver applies it with the ShardedListAndWatch
// gate on (filtering with apimachinery's pkg/sharding and echoing the
// selector in metadata.shardInfo); when not, it ignores the selector as a
// server without the gate does.
type shardServer struct {
	honours  bool
	listOnly bool

	mu       sync.Mutex
	rv       int
	objects  map[string]*corev1.ConfigMap
	log      []logged // every change, in resourceVersion order
	watchers []*shardWatcher
	// selectors records the ShardSelector of every request.
	selectors []string
	// lists counts the lists: list requests and WatchList watches.
	lists  int
	random *rand.Rand
}

// logged is a change and the object it changed (nil if new).
type logged struct {
	watch.Event
	prev *corev1.ConfigMap
}

type shardWatcher struct {
	selection
	w *bigWatch
}

// selection is what a list or watch asked for; its Shard is nil unless
// the server honours ShardSelectors.
type selection struct{ shardcheck.Request }

// bigWatch is a watch with room for every event of a test; unlike
// apimachinery's fakes it neither blocks nor panics when full or stopped.
type bigWatch struct {
	mu      sync.Mutex
	result  chan watch.Event
	stopped bool
}

func newBigWatch() *bigWatch { return &bigWatch{result: make(chan watch.Event, 1<<16)} }

func (w *bigWatch) ResultChan() <-chan watch.Event { return w.result }

func (w *bigWatch) Stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.stopped {
		w.stopped = true
		close(w.result)
	}
}

func (w *bigWatch) Action(kind watch.EventType, obj runtime.Object) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped {
		return
	}
	select {
	case w.result <- watch.Event{Type: kind, Object: obj}:
	default:
		panic("bigWatch: more events than a test should make")
	}
}

func newShardServer(honours, listOnly bool) *shardServer {
	return &shardServer{honours: honours, listOnly: listOnly, objects: map[string]*corev1.ConfigMap{}}
}

// Source serves every resource as the ConfigMaps, with WatchList
// (client-go's default) unless listOnly is set.
func (s *shardServer) Source(_ schema.GroupVersionResource, namespace string, tweak generic.TweakListOptionsFunc) cache.ListerWatcher {
	lw := &cache.ListWatch{
		ListWithContextFunc: func(_ context.Context, o metav1.ListOptions) (runtime.Object, error) {
			if tweak != nil {
				tweak(&o)
			}
			return s.list(namespace, o)
		},
		WatchFuncWithContext: func(_ context.Context, o metav1.ListOptions) (watch.Interface, error) {
			if tweak != nil {
				tweak(&o)
			}
			return s.watch(namespace, o)
		},
	}
	if s.listOnly {
		return listOnly{lw}
	}
	return lw
}

// listOnly is a ListerWatcher that tells the reflector to list, not to
// use WatchList.
type listOnly struct{ *cache.ListWatch }

func (listOnly) IsWatchListSemanticsUnSupported() bool { return true }

// create adds n ConfigMaps named prefix-0 … with fresh UIDs to namespace
// default.
func (s *shardServer) create(prefix string, n int) { s.createIn("default", prefix, n) }

// createIn adds n ConfigMaps named prefix-0 … with fresh UIDs to namespace.
func (s *shardServer) createIn(namespace, prefix string, n int) {
	for i := range n {
		s.apply(watch.Added, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
			Namespace: namespace, Name: fmt.Sprintf("%s-%d", prefix, i), UID: s.newUID(),
		}})
	}
}

// newUID returns a random-looking version 4 UUID, as the API server makes
// (FNV-1a spreads those evenly; names with a counter would not be), from a
// fixed seed, so that every run shards the same way.
func (s *shardServer) newUID() types.UID {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.random == nil {
		s.random = rand.New(rand.NewPCG(1, 2))
	}
	var b [16]byte
	binary.LittleEndian.PutUint64(b[:8], s.random.Uint64())
	binary.LittleEndian.PutUint64(b[8:], s.random.Uint64())
	b[6], b[8] = b[6]&0x0f|0x40, b[8]&0x3f|0x80
	return types.UID(fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:]))
}

// delete deletes ConfigMap default/name, if there is one.
func (s *shardServer) delete(name string) {
	s.mu.Lock()
	cm := s.objects["default/"+name]
	s.mu.Unlock()
	if cm != nil {
		s.apply(watch.Deleted, cm.DeepCopy())
	}
}

// update replaces ConfigMap cm (by namespace/name) and returns it as
// stored, with its new resourceVersion.
func (s *shardServer) update(cm *corev1.ConfigMap) *corev1.ConfigMap {
	stored := cm.DeepCopy()
	s.apply(watch.Modified, stored)
	return stored
}

// apply stores a change and sends each watch what it sees of it.
func (s *shardServer) apply(kind watch.EventType, cm *corev1.ConfigMap) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rv++
	cm.ResourceVersion = strconv.Itoa(s.rv)
	key := cm.Namespace + "/" + cm.Name
	prev := s.objects[key]
	if kind == watch.Deleted {
		delete(s.objects, key)
	} else {
		s.objects[key] = cm
	}
	event := watch.Event{Type: kind, Object: cm}
	s.log = append(s.log, logged{Event: event, prev: prev})
	for _, w := range s.watchers {
		if seen, ok := w.sees(event, prev); ok {
			w.w.Action(seen, cm.DeepCopy())
		}
	}
}

// sees returns the event a watch of the selection gets for a change of
// prev (nil if new) into event's object, if any: the server's watch cache
// turns a modification out of a label selector into DELETED and one into
// it into ADDED.
func (sel selection) sees(event watch.Event, prev *corev1.ConfigMap) (watch.EventType, bool) {
	now := sel.holds(event.Object.(*corev1.ConfigMap))
	before := prev != nil && sel.holds(prev)
	switch {
	case event.Type != watch.Modified:
		return event.Type, now
	case now && !before:
		return watch.Added, true
	case !now && before:
		return watch.Deleted, true
	}
	return event.Type, now
}

// selectionOf reads what a request asks for, and records its
// ShardSelector.
func (s *shardServer) selectionOf(namespace string, o metav1.ListOptions) (selection, error) {
	s.selectors = append(s.selectors, o.ShardSelector)
	if !s.honours {
		o.ShardSelector = "" // a server without the feature gate never reads it
	}
	r, err := shardcheck.ParseRequest(namespace, o)
	return selection{r}, err
}

// holds reports whether cm is in the selection.
func (sel selection) holds(cm *corev1.ConfigMap) bool { return sel.Matches(cm) && sel.InShard(cm) }

func (s *shardServer) list(namespace string, o metav1.ListOptions) (runtime.Object, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sel, err := s.selectionOf(namespace, o)
	if err != nil {
		return nil, err
	}
	s.lists++
	list := &corev1.ConfigMapList{ListMeta: metav1.ListMeta{ResourceVersion: strconv.Itoa(s.rv)}}
	if sel.Shard != nil {
		list.ShardInfo = &metav1.ShardInfo{Selector: o.ShardSelector}
	}
	for _, cm := range s.objects {
		if sel.holds(cm) {
			list.Items = append(list.Items, *cm.DeepCopy())
		}
	}
	return list, nil
}

func (s *shardServer) watch(namespace string, o metav1.ListOptions) (watch.Interface, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sel, err := s.selectionOf(namespace, o)
	if err != nil {
		return nil, err
	}
	from, err := strconv.Atoi(o.ResourceVersion)
	if err != nil {
		from = s.rv
	}
	w := &shardWatcher{selection: sel, w: newBigWatch()}
	if o.SendInitialEvents != nil && *o.SendInitialEvents {
		s.lists++
		// WatchList (KEP-3157): the objects as adds, then the bookmark
		// that ends them; the stream carries no shardInfo.
		for _, cm := range s.objects {
			if sel.holds(cm) {
				w.w.Action(watch.Added, cm.DeepCopy())
			}
		}
		w.w.Action(watch.Bookmark, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
			ResourceVersion: strconv.Itoa(s.rv),
			Annotations:     map[string]string{metav1.InitialEventsAnnotationKey: "true"},
		}})
		from = s.rv
	}
	for _, l := range s.log[from:] {
		if seen, ok := sel.sees(l.Event, l.prev); ok {
			w.w.Action(seen, l.Object.(*corev1.ConfigMap).DeepCopy())
		}
	}
	s.watchers = append(s.watchers, w)
	return w.w, nil
}

// expireWatches ends every watch with 410 Gone, as a server whose watch
// cache no longer holds the watches' resourceVersions does: the reflectors
// relist.
func (s *shardServer) expireWatches() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, w := range s.watchers {
		w.w.Action(watch.Error, &metav1.Status{
			Status: metav1.StatusFailure, Code: 410, Reason: metav1.StatusReasonExpired, Message: "too old resource version",
		})
	}
	s.watchers = nil
}

// listCount returns how many lists (list requests and WatchList watches)
// the server has served.
func (s *shardServer) listCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lists
}

// requestedSelectors returns the ShardSelectors requested so far.
func (s *shardServer) requestedSelectors() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.selectors...)
}

// keys returns the namespace/name of the ConfigMaps the server holds.
func (s *shardServer) keys() map[string]bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	keys := map[string]bool{}
	for key := range s.objects {
		keys[key] = true
	}
	return keys
}

// names returns the names of the ConfigMaps the server holds.
func (s *shardServer) names() map[string]bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	names := map[string]bool{}
	for _, cm := range s.objects {
		names[cm.Name] = true
	}
	return names
}
