package controller

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/resourceversion"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/cache"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/internal/writes"
)

// catchUp waits until an informer's cache has applied a write of its
// resource. It returns nil once the cache has the write or never will show
// it (outside the informer's selection or shard, the object deleted, a newer
// state of it cached), an error wrapping generic.ErrInformerStopped if the
// informer has stopped first, and any other error (ctx's end, resource
// versions that cannot be ordered...) when it cannot tell yet: the key is
// then delayed.
type catchUp func(ctx context.Context, w writes.Write) error

// deletePollInterval is how often a wait that reads the cache's objects
// (for a delete, or on an informer whose selection the wait cannot judge)
// looks at it: client-go's cache keeps no resource version of a delete
// the client did not see the answer of.
const deletePollInterval = 5 * time.Millisecond

// catchUpOf returns the catchUp of informer, decided when the controller
// is built:
//
//   - a create, update or patch: WaitForWrite with the write's metadata in
//     an object of the informer's type (all it reads of it); on an
//     informer whose field selector names other fields than metadata.name
//     and metadata.namespace (judged false), whose server may send no event
//     of a written object, the cache holding no state of the object older
//     than the write (see waitNoOlder);
//   - a delete: the object's absence (or its replacement by another UID, or
//     its deletionTimestamp: finalizers keep it cached until they are
//     done).
func catchUpOf[S generic.Object](informer generic.Informer[S], judged bool) catchUp {
	return func(ctx context.Context, w writes.Write) error {
		if w.Deleted {
			return waitAbsent(ctx, informer, w)
		}
		if !judged {
			return waitNoOlder(ctx, informer, w)
		}
		obj, err := objectOf[S](w)
		if err != nil {
			return err
		}
		return informer.WaitForWrite(ctx, obj)
	}
}

// judgesWrites reports whether WaitForWrite can tell, from a written
// object's metadata, whether the object is in the selection of an informer
// with this field selector (generic.Status.FieldSelector): whether the
// selector names no field but metadata.name and metadata.namespace. On
// another field (spec.nodeName), the server sends no event of an object
// written outside the selection, and nothing tells the wait so: the
// cache's resource version reaches the write's only with later events or
// a bookmark, a minute or more on a quiet resource.
func judgesWrites(fieldSelector string) bool {
	if fieldSelector == "" {
		return true
	}
	selector, err := fields.ParseSelector(fieldSelector)
	if err != nil {
		return false
	}
	for _, r := range selector.Requirements() {
		if r.Field != "metadata.name" && r.Field != "metadata.namespace" {
			return false
		}
	}
	return true
}

// objectOf makes an S holding w's metadata. S must be a pointer to a
// struct (watches checks it when the controller is built).
func objectOf[S generic.Object](w writes.Write) (S, error) {
	var obj S
	t := reflect.TypeFor[S]()
	if t.Kind() != reflect.Pointer {
		return obj, fmt.Errorf("controller: cannot make a %v to wait for a write: not a pointer type", t)
	}
	obj, ok := reflect.New(t.Elem()).Interface().(S)
	if !ok {
		return obj, fmt.Errorf("controller: cannot make a %v to wait for a write", t)
	}
	accessor, err := meta.Accessor(obj)
	if err != nil {
		return obj, err
	}
	accessor.SetNamespace(w.Namespace)
	accessor.SetName(w.Name)
	accessor.SetUID(types.UID(w.UID))
	accessor.SetResourceVersion(w.ResourceVersion)
	accessor.SetLabels(w.Labels)
	return obj, nil
}

// pollCache calls done at once and every deletePollInterval until it
// reports true or an error, ctx ends (its error), or the informer has
// stopped (then done is asked once more: its last events may have reached
// the cache; an error wrapping generic.ErrInformerStopped if not).
func pollCache[S generic.Object](ctx context.Context, informer generic.Informer[S], what string, done func() (bool, error)) error {
	err := wait.PollUntilContextCancel(ctx, deletePollInterval, true, func(context.Context) (bool, error) {
		if ok, err := done(); ok || err != nil {
			return ok, err
		}
		if informer.Status().State != generic.Stopped {
			return false, nil
		}
		if ok, err := done(); ok || err != nil {
			return ok, err
		}
		return false, fmt.Errorf("controller: wait for %s in the cache of %s: %w", what, informer.GroupVersionResource(), generic.ErrInformerStopped)
	})
	if err != nil && ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return fmt.Errorf("controller: wait for %s in the cache of %s (%s): %w", what, informer.GroupVersionResource(), informer.Status().State, err)
	}
	return err
}

// cachedOf returns the object of w's namespace and name that informer's
// cache holds, or NotFound.
func cachedOf[S generic.Object](lister generic.Lister[S], w writes.Write) (S, error) {
	if w.Namespace == "" {
		return lister.Get(w.Name)
	}
	return lister.Namespace(w.Namespace).Get(w.Name)
}

// waitAbsent waits until informer's cache no longer holds the object w
// deleted: not held, held under another UID (recreated), or held with a
// deletionTimestamp (finalizers keep it until they are done).
func waitAbsent[S generic.Object](ctx context.Context, informer generic.Informer[S], w writes.Write) error {
	lister := informer.Lister()
	return pollCache(ctx, informer, fmt.Sprintf("the delete of %s/%s", w.Namespace, w.Name), func() (bool, error) {
		obj, err := cachedOf(lister, w)
		if apierrors.IsNotFound(err) {
			return true, nil // not held
		}
		if err != nil {
			return false, err
		}
		return (w.UID != "" && string(obj.GetUID()) != w.UID) || obj.GetDeletionTimestamp() != nil, nil
	})
}

// waitNoOlder waits until informer's cache holds no state of w's object
// older than w (by resource version, whatever its UID): the wait on an
// informer whose selection it cannot judge. The server sends such an
// informer an event of each object it holds that a write changes (an
// update, or a delete when the write took the object out of the
// selection), so the wait ends with the watch's latency; an object the
// cache does not hold is not waited for: a write that created the object,
// or brought it into the selection, may not be in the cache yet.
func waitNoOlder[S generic.Object](ctx context.Context, informer generic.Informer[S], w writes.Write) error {
	lister := informer.Lister()
	gvr := informer.GroupVersionResource()
	return pollCache(ctx, informer, fmt.Sprintf("the write of %s/%s at resource version %q", w.Namespace, w.Name, w.ResourceVersion), func() (bool, error) {
		obj, err := cachedOf(lister, w)
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		if err != nil {
			return false, err
		}
		order, err := resourceversion.CompareResourceVersion(obj.GetResourceVersion(), w.ResourceVersion)
		if err != nil {
			return false, &generic.ResourceVersionError{GVR: gvr, Wanted: w.ResourceVersion, Cached: obj.GetResourceVersion(), Err: err}
		}
		return order >= 0, nil
	})
}

// writeLog holds, per primary key, the writes its reconciles made that the
// next reconcile of the key must see: of each object, its latest create,
// update or patch, and a delete made after it. Safe for concurrent use.
type writeLog struct {
	mu    sync.Mutex
	byKey map[cache.ObjectName]map[writtenObject][]writes.Write
	// uidOf returns the UID the controller's caches hold for an object,
	// or "": what a delete, whose answer client-go drops, is recorded with.
	uidOf func(w writes.Write) string
	// recorded is called after each write is recorded.
	recorded func()
}

type writtenObject struct {
	resource        string
	namespace, name string
}

func newWriteLog(uidOf func(writes.Write) string, recorded func()) *writeLog {
	return &writeLog{byKey: map[cache.ObjectName]map[writtenObject][]writes.Write{}, uidOf: uidOf, recorded: recorded}
}

func objectID(w writes.Write) writtenObject {
	return writtenObject{resource: w.Resource.String(), namespace: w.Namespace, name: w.Name}
}

// recorderFor returns the Recorder of key's reconciles.
func (l *writeLog) recorderFor(key cache.ObjectName) writes.Recorder {
	return keyRecorder{log: l, key: key}
}

type keyRecorder struct {
	log *writeLog
	key cache.ObjectName
}

// Record keeps w. A delete keeps the write before it, so that the wait
// sees the object come before it sees it go (a create and a delete in one
// reconcile), and carries the object's UID (that write's, or the caches'),
// so that an object recreated under the name does not pass for the one
// deleted.
func (r keyRecorder) Record(w writes.Write) {
	uid := ""
	if w.Deleted && w.UID == "" {
		uid = r.log.uidOf(w) // outside the lock: it reads the caches
	}
	r.log.mu.Lock()
	defer r.log.mu.Unlock()
	if r.log.recorded != nil {
		defer r.log.recorded()
	}
	objs := r.log.byKey[r.key]
	if objs == nil {
		objs = map[writtenObject][]writes.Write{}
		r.log.byKey[r.key] = objs
	}
	id := objectID(w)
	if !w.Deleted {
		objs[id] = []writes.Write{w}
		return
	}
	var kept []writes.Write
	if prev := objs[id]; len(prev) > 0 && !prev[0].Deleted {
		kept = prev[:1:1]
		uid = prev[0].UID
	}
	if w.UID == "" {
		w.UID = uid
	}
	objs[id] = append(kept, w)
}

// pending returns key's recorded writes, each object's in the order made.
func (l *writeLog) pending(key cache.ObjectName) []writes.Write {
	l.mu.Lock()
	defer l.mu.Unlock()
	var ws []writes.Write
	for _, objWrites := range l.byKey[key] {
		ws = append(ws, objWrites...)
	}
	return ws
}

// all returns every key's recorded writes.
func (l *writeLog) all() map[cache.ObjectName][]writes.Write {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make(map[cache.ObjectName][]writes.Write, len(l.byKey))
	for key, objs := range l.byKey {
		for _, objWrites := range objs {
			out[key] = append(out[key], objWrites...)
		}
	}
	return out
}

// clear drops key's writes seen, those the caches have caught up with, as
// KEP-5647's ConsistencyStore.Clear; a later write of the same object
// stays.
func (l *writeLog) clear(key cache.ObjectName, seen []writes.Write) {
	l.mu.Lock()
	defer l.mu.Unlock()
	objs := l.byKey[key]
	for _, w := range seen {
		id := objectID(w)
		kept := objs[id][:0:0]
		for _, k := range objs[id] {
			if !sameWrite(k, w) {
				kept = append(kept, k)
			}
		}
		if len(kept) == 0 {
			delete(objs, id)
		} else {
			objs[id] = kept
		}
	}
	if len(objs) == 0 {
		delete(l.byKey, key)
	}
}

func sameWrite(a, b writes.Write) bool {
	return a.ResourceVersion == b.ResourceVersion && a.UID == b.UID && a.Deleted == b.Deleted
}
