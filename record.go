package generic

import (
	"sync"
)

// objectKey names an object by namespace and name without building the
// "namespace/name" string, so that recording it costs no allocation.
type objectKey struct{ namespace, name string }

func (k objectKey) String() string {
	if k.namespace == "" {
		return k.name
	}
	return k.namespace + "/" + k.name
}

// lastGood is the ingest's own record of the last good state of every
// object it has delivered downstream, built from the stream it delivered
// (lists, then watch events, in their order) and nothing else.
//
// It is what lets a known object whose update or delete no longer decodes
// leave the cache as a delete carrying its last good state, in every
// interleaving: the cache cannot answer that question, since it lags the
// reflector's queue (an object added and at once updated to a bad state is
// not in the cache yet when the update is converted). Its values are the
// very objects the cache holds, so it costs a map entry per object, not a
// copy.
//
// A relist (a full list, or a WatchList stream's initial events) replaces
// the record as a whole, and moves it to a new generation: the watches of
// an older generation no longer change it.
type lastGood[T Object] struct {
	mu         sync.Mutex
	objects    map[objectKey]T
	generation uint64
}

func newLastGood[T Object]() *lastGood[T] {
	return &lastGood[T]{objects: map[objectKey]T{}}
}

// current returns the record's generation, which a plain watch started now
// works in.
func (r *lastGood[T]) current() uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.generation
}

// replace makes objects the record of a new generation and returns it.
func (r *lastGood[T]) replace(objects map[objectKey]T) uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.objects = objects
	r.generation++
	return r.generation
}

// set records t as the last good state of key, unless generation is past.
func (r *lastGood[T]) set(generation uint64, key objectKey, t T) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if generation == r.generation {
		r.objects[key] = t
	}
}

// remove forgets key, unless generation is past.
func (r *lastGood[T]) remove(generation uint64, key objectKey) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if generation == r.generation {
		delete(r.objects, key)
	}
}

// get returns the last good state of key, if generation is current and it
// has one.
func (r *lastGood[T]) get(generation uint64, key objectKey) (T, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	t, ok := r.objects[key]
	return t, ok && generation == r.generation
}
