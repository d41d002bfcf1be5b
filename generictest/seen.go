package generictest

import (
	"cmp"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"k8s.io/client-go/tools/cache"

	"github.com/generic-informers/generic"
)

// seenLog records, for every handler registered through the Fake's
// informers, the last state of each object it has seen, so that a change
// can wait until all of them have seen it. It also counts the objects the
// typed informers rejected, whose changes no handler will see.
type seenLog struct {
	mu       sync.Mutex
	changed  chan struct{} // closed, and replaced, at every record
	handlers []*handlerLog
	rejected map[string]int // "gvr key" -> ConversionErrors reported
	// stamps is the Fake's resourceVersion counter.
	stamps *atomic.Int64
}

func newSeenLog(stamps *atomic.Int64) *seenLog {
	return &seenLog{changed: make(chan struct{}), rejected: map[string]int{}, stamps: stamps}
}

// handlerLog is what one handler has seen.
type handlerLog struct {
	// source is the informer the handler is registered on.
	source cache.SharedIndexInformer
	gvr    schema.GroupVersionResource
	// requests are its informer's: it sees only the objects they select.
	requests *informerRequests
	// converts is set for typed informers, which skip what they cannot
	// convert.
	converts bool
	objects  map[string]string // key -> resourceVersion of objects it has
	// gone holds the last resourceVersion of the objects it saw deleted:
	// a change it saw and then saw deleted (a controller that deletes what
	// it is told of) has been seen.
	gone   map[string]string
	events map[string]int // key -> events seen
}

// newHandler starts the log of a handler of source, the informer of gvr
// that makes requests.
func (l *seenLog) newHandler(source cache.SharedIndexInformer, gvr schema.GroupVersionResource, requests *informerRequests, converts bool) *handlerLog {
	h := &handlerLog{source: source, gvr: gvr, requests: requests, converts: converts,
		objects: map[string]string{}, gone: map[string]string{}, events: map[string]int{}}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.handlers = append(l.handlers, h)
	return h
}

// present records that h has key at resourceVersion; absent that it has it
// no more.
func (l *seenLog) present(h *handlerLog, key, resourceVersion string) {
	l.update(func() {
		h.objects[key] = resourceVersion
		h.events[key]++
	})
}

func (l *seenLog) absent(h *handlerLog, key string) {
	l.update(func() {
		if rv, ok := h.objects[key]; ok {
			h.gone[key] = rv
		}
		delete(h.objects, key)
		h.events[key]++
	})
}

func (l *seenLog) recordError(err error) {
	var conversion *generic.ConversionError
	if errors.As(err, &conversion) {
		l.update(func() { l.rejected[conversion.GVR.String()+" "+conversion.Key]++ })
	}
}

func (l *seenLog) update(change func()) {
	l.mu.Lock()
	change()
	close(l.changed)
	l.changed = make(chan struct{})
	l.mu.Unlock()
}

// wait returns a channel closed at the next record.
func (l *seenLog) wait() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.changed
}

// expectation is the state of one object after a change made through the
// Fake: present at resourceVersion, or absent.
type expectation struct {
	gvr             schema.GroupVersionResource
	obj             *unstructured.Unstructured // the object as changed (or deleted)
	key             string
	present         bool
	resourceVersion string
	// rejectedBefore counts the conversion errors of the object before the
	// change: one more means typed informers skipped it.
	rejectedBefore int
	// relisted asks, for a present object, for an event after the
	// expectation was made, even at the same resourceVersion: a relist
	// tells handlers of every object. eventsBefore are the handlers'
	// counts of events of the object then.
	relisted     bool
	eventsBefore map[*handlerLog]int
	// since is, for an object that must be gone from a handler's view,
	// the resourceVersion of the state that left it: the object's, or
	// else the last stamped when the expectation was made. The Fake
	// stamps in increasing order, so a handler that has the object at a
	// later version has seen a later write (by the code under test, say)
	// and so this change too.
	since string
	// source, if set, limits the expectation to the handlers of one
	// informer: the state of its cache, which other informers (typed ones
	// that skip what they cannot convert) may not share.
	source cache.SharedIndexInformer
}

// expect makes the expectation of a change of obj; rejectedBefore is
// rejectedCount taken before the change was made (after, a rejection of
// it may already be counted).
func (l *seenLog) expect(gvr schema.GroupVersionResource, obj *unstructured.Unstructured, key string, present bool, rejectedBefore int) expectation {
	return expectation{gvr: gvr, obj: obj, key: key, present: present,
		resourceVersion: obj.GetResourceVersion(), rejectedBefore: rejectedBefore,
		since: cmp.Or(obj.GetResourceVersion(), l.lastStamp())}
}

// lastStamp is the last resourceVersion the Fake stamped.
func (l *seenLog) lastStamp() string {
	return strconv.FormatInt(l.stamps.Load(), 10)
}

// expectCache makes the expectations of the state of the cache of source:
// every handler of it has objs at their resourceVersions (or later), and
// no other object.
// since is lastStamp from before the cache was read.
func (l *seenLog) expectCache(source cache.SharedIndexInformer, gvr schema.GroupVersionResource, objs []*unstructured.Unstructured, since string) []expectation {
	var expectations []expectation
	cached := map[string]bool{}
	for _, obj := range objs {
		key := keyOf(obj)
		cached[key] = true
		e := l.expect(gvr, obj, key, true, 0)
		e.source = source
		expectations = append(expectations, e)
	}
	for _, key := range l.keysOf(source) {
		if !cached[key] {
			e := l.expect(gvr, &unstructured.Unstructured{}, key, false, 0)
			e.source, e.since = source, since
			expectations = append(expectations, e)
		}
	}
	return expectations
}

// keysOf returns the keys of the objects the handlers of source have.
func (l *seenLog) keysOf(source cache.SharedIndexInformer) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var keys []string
	for _, h := range l.handlers {
		if h.source == source {
			for key := range h.objects {
				keys = append(keys, key)
			}
		}
	}
	return keys
}

// rejectedCount counts the conversion errors reported for key.
func (l *seenLog) rejectedCount(gvr schema.GroupVersionResource, key string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.rejected[gvr.String()+" "+key]
}

// expectRelisted is expect for an object a relist will show again.
// expectRelisted is taken before the relist starts.
func (l *seenLog) expectRelisted(gvr schema.GroupVersionResource, obj *unstructured.Unstructured, key string) expectation {
	e := l.expect(gvr, obj, key, true, l.rejectedCount(gvr, key))
	l.mu.Lock()
	defer l.mu.Unlock()
	e.relisted = true
	e.eventsBefore = map[*handlerLog]int{}
	for _, h := range l.handlers {
		e.eventsBefore[h] = h.events[key]
	}
	return e
}

// unmet returns, in words, the expectations some handler has not met yet.
func (l *seenLog) unmet(expectations []expectation) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var unmet []string
	for _, e := range expectations {
		for i, h := range l.handlers {
			if !l.met(h, e) {
				unmet = append(unmet, fmt.Sprintf("handler %d of %s has not seen %s %s; %s",
					i, h.gvr.Resource, e.key, e.describe(), h.describe(e.key)))
			}
		}
	}
	sort.Strings(unmet)
	return unmet
}

// met reports whether h has seen e, or will never see it.
func (l *seenLog) met(h *handlerLog, e expectation) bool {
	if h.gvr != e.gvr || e.source != nil && h.source != e.source {
		return true
	}
	rv, has := h.objects[e.key]
	if !e.present || !h.sees(e.obj) {
		// Deleted, or changed out of the handler's view: it must have
		// let it go, or have seen it written again since.
		return !has || newer(rv, e.since)
	}
	atOrAfter := rv == e.resourceVersion || newer(rv, e.resourceVersion)
	if has && atOrAfter && (!e.relisted || h.events[e.key] > e.eventsBefore[h]) {
		return true
	}
	if gone, ok := h.gone[e.key]; !has && ok && !e.relisted && (gone == e.resourceVersion || newer(gone, e.resourceVersion)) {
		return true // seen, then seen deleted
	}
	// A typed informer that could not convert the object skips the new
	// state: it keeps what it had of it (marked stale, Status.Stale), or
	// has nothing of it.
	return h.converts && l.rejected[e.gvr.String()+" "+e.key] > e.rejectedBefore
}

// sees reports whether h's informer holds obj: whether h is told of it.
func (h *handlerLog) sees(obj *unstructured.Unstructured) bool {
	return h.requests.selection().holds(obj)
}

func (e expectation) describe() string {
	if !e.present {
		return "deleted"
	}
	return "at resourceVersion " + e.resourceVersion
}

// describe says what h has of key, for a test's failure.
func (h *handlerLog) describe(key string) string {
	rv, has := h.objects[key]
	if !has {
		return fmt.Sprintf("it has no such object (after %d events of it)", h.events[key])
	}
	return fmt.Sprintf("it has it at resourceVersion %s (after %d events of it)", rv, h.events[key])
}

// count returns how many objects h has.
func (l *seenLog) count(h *handlerLog) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(h.objects)
}

// newer reports whether resourceVersion a was stamped after b; versions
// the Fake did not stamp are never newer.
func newer(a, b string) bool {
	x, errA := strconv.ParseInt(a, 10, 64)
	y, errB := strconv.ParseInt(b, 10, 64)
	return errA == nil && errB == nil && x > y
}

func join(lines []string) string { return strings.Join(lines, "\n") }

// resources returns the resources the handlers watch.
func (l *seenLog) resources() []schema.GroupVersionResource {
	l.mu.Lock()
	defer l.mu.Unlock()
	seen := map[schema.GroupVersionResource]bool{}
	var gvrs []schema.GroupVersionResource
	for _, h := range l.handlers {
		if !seen[h.gvr] {
			seen[h.gvr] = true
			gvrs = append(gvrs, h.gvr)
		}
	}
	return gvrs
}

// watchKeys names the watches of the handlers' informers.
func (l *seenLog) watchKeys() []watchKey {
	l.mu.Lock()
	defer l.mu.Unlock()
	seen := map[*informerRequests]bool{}
	var keys []watchKey
	for _, h := range l.handlers {
		if !seen[h.requests] {
			seen[h.requests] = true
			keys = append(keys, watchKey{gvr: h.gvr, owner: h.requests})
		}
	}
	return keys
}
