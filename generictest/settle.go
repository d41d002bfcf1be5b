package generictest

import (
	"sort"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Settle waits until every write made since the Fake was made, through any
// of its clients (Dynamic, Clientset, the REST front of Config, clients of
// Factory, the Fake's own Create, Update and Delete), has been seen by
// every handler registered through the Fake's informers that should see
// it: the guarantee Create gives, for the writes of the code under test.
// For each object written, the handlers must have its last state, or a
// later one (or, if it was deleted last, not have it); a handler whose
// informer does not select the object, and a typed informer that reported
// the object as unconvertible, are not waited for.
//
// A handler that writes as it handles an event (a controller reconciling
// in its handler) writes before its handler returns: Settle waits for those
// writes too, and for the writes they set off, until no write is left
// unseen. A write made later by another goroutine (a controller's worker)
// is waited for only if it is made before Settle returns; wait for its
// outcome with WaitFor or WaitForState.
//
// Settle fails the test, saying what each handler lacks and has, if the
// handlers have not caught up within the Fake's Timeout, or if writes keep
// coming until then. It must not be called inside WithoutWatch, whose
// changes cannot be seen until it ends, nor from a handler (which would
// wait for itself). Call it from the test's goroutine: it fails the test
// with t.Fatalf. Writes made straight to Dynamic's Tracker are not known
// to it.
func (f *Fake) Settle() {
	f.t.Helper()
	if f.unsettled {
		f.t.Fatalf("generictest: Settle inside WithoutWatch: its changes cannot be seen until it ends")
		return
	}
	ctx, cancel, bound := f.deadline()
	defer cancel()
	for {
		count, writes := f.writes.snapshot()
		expectations := make([]expectation, len(writes))
		for i, w := range writes {
			expectations[i] = f.seen.expect(w.gvr, w.obj, w.key, w.present, w.rejectedBefore)
		}
		f.settleWithin(ctx, bound, "the writes made so far", expectations)
		if f.writes.count() == count {
			return
		}
		if ctx.Err() != nil {
			f.t.Fatalf("generictest: writes kept coming for %v: the handlers write at each event they see", bound)
			return
		}
	}
}

// writeLog holds, of every object the Fake's clients wrote, the last
// write: what Settle waits for the handlers to see.
type writeLog struct {
	// rejected counts the conversion errors of an object so far.
	rejected func(gvr schema.GroupVersionResource, key string) int

	mu     sync.Mutex
	last   map[writeKey]write
	writes int
}

type writeKey struct {
	gvr schema.GroupVersionResource
	key string
}

// write is one write of an object: its state stored (present), or its last
// state before a delete.
type write struct {
	gvr     schema.GroupVersionResource
	key     string
	obj     *unstructured.Unstructured
	present bool
	// rejectedBefore counts the object's conversion errors before the
	// write.
	rejectedBefore int
}

func newWriteLog(rejected func(schema.GroupVersionResource, string) int) *writeLog {
	return &writeLog{rejected: rejected, last: map[writeKey]write{}}
}

// rejectedBefore counts the conversion errors of obj, before it is
// written.
func (l *writeLog) rejectedBefore(gvr schema.GroupVersionResource, obj *unstructured.Unstructured) int {
	if l == nil || l.rejected == nil {
		return 0
	}
	return l.rejected(gvr, keyOf(obj))
}

// record records a write of obj, of which the log keeps a copy.
func (l *writeLog) record(gvr schema.GroupVersionResource, obj *unstructured.Unstructured, present bool, rejectedBefore int) {
	if l == nil {
		return
	}
	key := keyOf(obj)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.last[writeKey{gvr, key}] = write{gvr: gvr, key: key, obj: obj.DeepCopy(), present: present, rejectedBefore: rejectedBefore}
	l.writes++
}

// count counts the writes recorded.
func (l *writeLog) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.writes
}

// snapshot returns the count of writes and the last write of each object,
// in a stable order.
func (l *writeLog) snapshot() (int, []write) {
	l.mu.Lock()
	defer l.mu.Unlock()
	writes := make([]write, 0, len(l.last))
	for _, w := range l.last {
		writes = append(writes, w)
	}
	sort.Slice(writes, func(i, j int) bool {
		if writes[i].gvr != writes[j].gvr {
			return writes[i].gvr.String() < writes[j].gvr.String()
		}
		return writes[i].key < writes[j].key
	})
	return l.writes, writes
}
