package listwatch

import (
	"cmp"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"
)

// A known object whose newer state does not decode, convert or transform
// keeps its last good state: the server still has the object, and a delete
// is a fact from the server, never an inference from an error (a made-up
// delete makes a controller clean up what still exists). client-go's
// reflector never infers a delete either: a decode error fails its watch
// and the last state stays. The ingest
//   - on a watch update, hands on a bookmark at the event's resourceVersion
//     in its place, so that the reflector's and the store's resourceVersion
//     move on as the server's did and never go back (the reflector resumes a
//     broken watch from the resourceVersion of the last event it handled);
//   - on a relist (a list, or a WatchList stream's initial events), keeps
//     the last good state in the list, so that client-go's Replace keeps it;
//   - on a delete, delivers the delete, carrying the last good state at the
//     delete's resourceVersion: a real delete whose payload does not decode
//     is still a delete;
// and records the object as stale, with the resourceVersion and error of
// the state it could not take, until a state of it is good again or it
// leaves the cache.

// Staleness is one object the cache holds at its last good state although
// the server has a newer one that did not decode, convert or transform.
type Staleness struct {
	// Key names the object.
	Key cache.ObjectName
	// ResourceVersion is that of the newer state ("" if unreadable), and
	// Err why it did not decode, convert or transform.
	ResourceVersion string
	Err             error
	// Since is when the ingest first met a state of the object it could
	// not take, since it last took one.
	Since time.Time
}

// staleErr is why a source's object did not become a T, with the
// resourceVersion the source gave it.
type staleErr struct {
	resourceVersion string
	err             error
}

// markStale records key, which the set holds, as stale since since.
func (s *objectSet[T]) markStale(key cache.ObjectName, why staleErr, since time.Time) {
	if s.stale == nil {
		s.stale = map[cache.ObjectName]Staleness{}
	}
	s.stale[key] = Staleness{Key: key, ResourceVersion: why.resourceVersion, Err: why.err, Since: since}
}

// staleness returns the staleness of key, if it is stale.
func (s *objectSet[T]) staleness(key cache.ObjectName) (Staleness, bool) {
	st, ok := s.stale[key]
	return st, ok
}

// restoreStale sets key's staleness back to was (ok: stale, else not).
func (s *objectSet[T]) restoreStale(key cache.ObjectName, was Staleness, ok bool) {
	if !ok {
		delete(s.stale, key)
		return
	}
	if s.stale == nil {
		s.stale = map[cache.ObjectName]Staleness{}
	}
	s.stale[key] = was
}

// staleObjects returns every stale object, sorted by key.
func (s *objectSet[T]) staleObjects() []Staleness {
	if len(s.stale) == 0 {
		return nil
	}
	out := make([]Staleness, 0, len(s.stale))
	for _, st := range s.stale {
		out = append(out, st)
	}
	slices.SortFunc(out, func(a, b Staleness) int {
		return cmp.Or(cmp.Compare(a.Key.Namespace, b.Key.Namespace), cmp.Compare(a.Key.Name, b.Key.Name))
	})
	return out
}

// mayKeep reports whether last, the last good state of an object that a
// list or watch made with selection v delivered in a state that did not
// convert (item), may stand for it: last belongs to v (a shard key, uid,
// namespace or name, does not change: the last good state is in the shard
// if the listed one is, unless the selection changed since last was
// delivered), and item is not another object of its name (a UID that can
// be read and differs: the server deleted the object and made another).
func (in *ingest[T]) mayKeep(v view, item runtime.Object, last Stored) bool {
	if inShard, err := in.shard.keeps(v, last); err != nil || !inShard {
		return false
	}
	m, ok := item.(metav1.Object)
	if !ok || isNilPointer(item) {
		return true
	}
	uid := m.GetUID()
	return uid == "" || last.GetUID() == "" || uid == last.GetUID()
}

// staleOf returns why a source's object did not become a T: err, with the
// resourceVersion the object carries, read without trusting it to be
// whole.
func staleOf(obj runtime.Object, err error) staleErr {
	why := staleErr{err: err}
	switch o := obj.(type) {
	case interface{ ObjectResourceVersion() string }:
		why.resourceVersion = o.ObjectResourceVersion()
	case metav1.Object:
		if !isNilPointer(obj) {
			why.resourceVersion = o.GetResourceVersion()
		}
	}
	return why
}

// atResourceVersion returns last, the last good state of an object, as of
// resourceVersion rv: itself if rv is empty or its own, else a copy at rv
// (a compact store's record says how: WithResourceVersion).
func atResourceVersion(last Stored, rv string) Stored {
	if rv == "" || rv == last.GetResourceVersion() {
		return last
	}
	if r, ok := last.(interface {
		WithResourceVersion(string) runtime.Object
	}); ok {
		if moved, ok := r.WithResourceVersion(rv).(Stored); ok {
			return moved
		}
		return last
	}
	moved, ok := last.DeepCopyObject().(Stored)
	if !ok || isNilPointer(moved) {
		return last
	}
	moved.SetResourceVersion(rv)
	return moved
}
