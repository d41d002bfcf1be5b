package generictest

import (
	"slices"
	"strings"
	"sync"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/client-go/tools/cache"

	"github.com/generic-informers/generic"
)

// Event is what a Recorder saw of one event.
type Event struct {
	// Verb is ADDED, MODIFIED or DELETED.
	Verb string
	// Key is namespace/name, or name for a cluster-scoped object.
	Key string
	// ResourceVersion is the object's; on a delete, its last known one.
	ResourceVersion string
	// Tombstone is set on a delete the informer did not see happen (a
	// relist found the object gone).
	Tombstone bool
}

// Event verbs.
const (
	Added    = "ADDED"
	Modified = "MODIFIED"
	Deleted  = "DELETED"
)

// Recorder is a typed event handler that records what it receives; register
// it with Informer.AddEventHandler and compare Events with cmp.Diff. It is
// safe for concurrent use.
type Recorder[T generic.Object] struct {
	mu     sync.Mutex
	events []Event
}

// NewRecorder returns an empty Recorder.
func NewRecorder[T generic.Object]() *Recorder[T] { return &Recorder[T]{} }

// OnAdd records an Added event (cache.TypedResourceEventHandler).
func (r *Recorder[T]) OnAdd(obj T, _ bool) {
	r.record(Event{Verb: Added, Key: keyOf(obj), ResourceVersion: obj.GetResourceVersion()})
}

// OnUpdate records a Modified event with the new object's key and
// resourceVersion.
func (r *Recorder[T]) OnUpdate(_, obj T) {
	r.record(Event{Verb: Modified, Key: keyOf(obj), ResourceVersion: obj.GetResourceVersion()})
}

// OnDelete records a Deleted event; Tombstone says whether the informer
// learnt of the delete only from a relist (cache.DeletedFinalStateUnknown).
func (r *Recorder[T]) OnDelete(deleted cache.DeletedObject[T]) {
	e := Event{Verb: Deleted, Key: deleted.GetKey(), Tombstone: deleted.FinalStateUnknown != nil}
	var zero T
	if deleted.OptionalObj != zero {
		e.ResourceVersion = deleted.OptionalObj.GetResourceVersion()
	}
	r.record(e)
}

func (r *Recorder[T]) record(e Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
}

// Events returns what the Recorder received, in order.
func (r *Recorder[T]) Events() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.events)
}

// Reset forgets what the Recorder received.
func (r *Recorder[T]) Reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = nil
}

// IgnoreResourceVersion makes cmp.Diff of Events ignore resourceVersions.
func IgnoreResourceVersion() cmp.Option {
	return cmpopts.IgnoreFields(Event{}, "ResourceVersion")
}

// IgnoreOrder makes cmp.Diff of Events ignore their order, for events of
// several objects whose relative order the test does not fix (the initial
// list's, for example).
func IgnoreOrder() cmp.Option {
	return cmpopts.SortSlices(func(a, b Event) bool {
		if a.Key != b.Key {
			return a.Key < b.Key
		}
		return strings.Compare(a.Verb, b.Verb) < 0
	})
}
