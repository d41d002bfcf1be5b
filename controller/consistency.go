package controller

import (
	"context"
	"fmt"
	"reflect"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/cache"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/internal/writes"
)

// catchUp waits until an informer's cache has applied a write of its
// resource.
type catchUp func(ctx context.Context, w writes.Write) error

// deletePollInterval is how often a wait for a delete looks at the cache:
// client-go's cache keeps no resource version of a delete the client did
// not see the answer of, so the wait polls the object's absence.
const deletePollInterval = 5 * time.Millisecond

// catchUpOf returns the catchUp of informer: WaitForWrite with the write's
// metadata in an object of the informer's type (all it reads of it), or for
// a delete, the object's absence (or its replacement by another UID, or
// its deletionTimestamp: finalizers keep it cached until they are done).
func catchUpOf[S generic.Object](informer generic.Informer[S]) catchUp {
	return func(ctx context.Context, w writes.Write) error {
		if w.Deleted {
			return waitAbsent(ctx, informer.Lister(), w)
		}
		obj, err := objectOf[S](w)
		if err != nil {
			return err
		}
		return informer.WaitForWrite(ctx, obj)
	}
}

// objectOf makes an S holding w's metadata.
func objectOf[S generic.Object](w writes.Write) (S, error) {
	obj, ok := reflect.New(reflect.TypeFor[S]().Elem()).Interface().(S)
	if !ok {
		return obj, fmt.Errorf("controller: cannot make a %v", reflect.TypeFor[S]())
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

func waitAbsent[S generic.Object](ctx context.Context, lister generic.Lister[S], w writes.Write) error {
	gone := func(context.Context) (bool, error) {
		var obj S
		var err error
		if w.Namespace == "" {
			obj, err = lister.Get(w.Name)
		} else {
			obj, err = lister.Namespace(w.Namespace).Get(w.Name)
		}
		if apierrors.IsNotFound(err) {
			return true, nil // not held
		}
		if err != nil {
			return false, err
		}
		return (w.UID != "" && string(obj.GetUID()) != w.UID) || obj.GetDeletionTimestamp() != nil, nil
	}
	return wait.PollUntilContextCancel(ctx, deletePollInterval, true, gone)
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
}

type writtenObject struct {
	resource        string
	namespace, name string
}

func newWriteLog(uidOf func(writes.Write) string) *writeLog {
	return &writeLog{byKey: map[cache.ObjectName]map[writtenObject][]writes.Write{}, uidOf: uidOf}
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
