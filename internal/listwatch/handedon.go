package listwatch

import (
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/resourceversion"
)

// handedOn is the resourceVersion of the newest object the chain handed on
// to the reflector, and so to the cache and the handlers: a watch event's
// (an add, update or delete; not a bookmark), or a listed object's. A
// handler that has been called with an object at this resourceVersion or a
// later one has been told of every change the chain handed on before,
// since a watch hands its events on in resourceVersion order (a relist's
// notifications come in the list's order, so that one may be told of the
// newest of them before the others). Events the reflector did not take
// from a watch that stopped are taken back (rollback), as the record's
// commits are.
type handedOn struct {
	mu sync.Mutex
	rv string
}

// advance makes rv, the resourceVersion of an object handed on, the
// newest if it is newer, and returns what was the newest before. A
// resourceVersion that cannot be ordered changes nothing.
func (h *handedOn) advance(rv string) (before string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	before = h.rv
	if rv == "" {
		return before
	}
	if h.rv == "" {
		h.rv = rv
		return before
	}
	if order, err := resourceversion.CompareResourceVersion(rv, h.rv); err == nil && order > 0 {
		h.rv = rv
	}
	return before
}

// rollback makes rv the newest again: the events handed on after it were
// not taken.
func (h *handedOn) rollback(rv string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.rv = rv
}

func (h *handedOn) get() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.rv
}

// newestOf is the newest resourceVersion of objs, "" if none has one that
// can be ordered.
func newestOf(objs []runtime.Object) string {
	var newest string
	for _, obj := range objs {
		rv := resourceVersionOf(obj)
		if rv == "" {
			continue
		}
		if newest == "" {
			newest = rv
		} else if order, err := resourceversion.CompareResourceVersion(rv, newest); err == nil && order > 0 {
			newest = rv
		}
	}
	return newest
}

// resourceVersionOf is obj's resourceVersion, "" if it has none.
func resourceVersionOf(obj runtime.Object) string {
	if obj == nil || isNilPointer(obj) {
		return ""
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return ""
	}
	return m.GetResourceVersion()
}
