package listwatch

import (
	"hash/maphash"
	"sync"
	"time"

	"k8s.io/client-go/tools/cache"
)

// objectSet holds one T per cache.ObjectName (client-go's name of an
// object by namespace and name, with no "namespace/name" string built) in
// about a third of the memory of a map[cache.ObjectName]T: its map is
// keyed by a 64-bit hash of the key (8 bytes, not two string headers),
// and each T is checked against its key on the way out. The rare keys
// whose hash an other key holds already live in overflow, so that no key
// ever answers for another.
type objectSet[T Stored] struct {
	hash     func(cache.ObjectName) uint64
	objects  map[uint64]T
	overflow map[cache.ObjectName]T
	// stale holds the objects held at a last good state although the
	// server has a newer one that did not decode (stale.go); nil when none
	// is.
	stale map[cache.ObjectName]Staleness
	// sizes are the objects' encoded sizes and their sum, if measured
	// (sizes.go).
	sizes encodedSizes[T]
}

// newObjectSet returns a set for size objects; encodedSize, if not nil,
// measures each object set, for encodedBytes.
func newObjectSet[T Stored](seed maphash.Seed, size int, encodedSize func(T) int) *objectSet[T] {
	return &objectSet[T]{
		hash:    func(key cache.ObjectName) uint64 { return maphash.Comparable(seed, key) },
		objects: make(map[uint64]T, size),
		sizes:   newEncodedSizes(encodedSize, size),
	}
}

func holds[T Stored](t T, key cache.ObjectName) bool {
	return t.GetName() == key.Name && t.GetNamespace() == key.Namespace
}

func (s *objectSet[T]) set(key cache.ObjectName, t T) {
	h := s.hash(key)
	if held, ok := s.objects[h]; ok && !holds(held, key) {
		if s.overflow == nil {
			s.overflow = map[cache.ObjectName]T{}
		}
		s.overflow[key] = t
		s.sizes.putOverflow(key, t)
		delete(s.stale, key)
		return
	}
	s.objects[h] = t
	s.sizes.put(h, t)
	delete(s.overflow, key)
	s.sizes.dropOverflow(key)
	delete(s.stale, key)
}

func (s *objectSet[T]) get(key cache.ObjectName) (T, bool) {
	if t, ok := s.objects[s.hash(key)]; ok && holds(t, key) {
		return t, true
	}
	t, ok := s.overflow[key]
	return t, ok
}

// cacheKeys returns the cache keys ("namespace/name") of the objects held.
func (s *objectSet[T]) cacheKeys() []string {
	keys := make([]string, 0, len(s.objects)+len(s.overflow))
	for _, t := range s.objects {
		keys = append(keys, cache.ObjectName{Namespace: t.GetNamespace(), Name: t.GetName()}.String())
	}
	for key := range s.overflow {
		keys = append(keys, key.String())
	}
	return keys
}

// len is the number of objects held.
func (s *objectSet[T]) len() int { return len(s.objects) + len(s.overflow) }

// encodedBytes is the sum of the encoded sizes of the objects held; 0 if
// they are not measured.
func (s *objectSet[T]) encodedBytes() int64 { return s.sizes.total }

func (s *objectSet[T]) remove(key cache.ObjectName) {
	h := s.hash(key)
	if t, ok := s.objects[h]; ok && holds(t, key) {
		delete(s.objects, h)
		s.sizes.drop(h)
	}
	delete(s.overflow, key)
	s.sizes.dropOverflow(key)
	delete(s.stale, key)
}

// lastGood is the ingest's own record of the last good state of every
// object it has delivered downstream, built from the stream it delivered
// (lists, then watch events, in their order) and nothing else.
//
// It is what lets a known object whose update no longer decodes keep its
// last good state, marked stale (stale.go), and a delete whose payload does
// not decode carry that state, in every interleaving: the cache cannot answer that question, since it lags the
// reflector's queue (an object added and at once updated to a bad state is
// not in the cache yet when the update is converted). Its values are the
// very values the cache holds (the objects, or a compact store's records
// of them: Config.Store), so it costs a map entry per object, not a copy;
// its stale objects, one more entry each.
//
// A relist (a full list, or a WatchList stream's initial events) replaces
// the record as a whole, and moves it to a new generation: the watches of
// an older generation no longer change it.
type lastGood[T Stored] struct {
	seed maphash.Seed
	// encodedSize, if not nil, measures each object recorded
	// (Config.EncodedSize).
	encodedSize func(T) int
	mu          sync.Mutex
	objects     *objectSet[T]
	generation  uint64
}

func newLastGood[T Stored](encodedSize func(T) int) *lastGood[T] {
	seed := maphash.MakeSeed()
	return &lastGood[T]{seed: seed, encodedSize: encodedSize, objects: newObjectSet(seed, 0, encodedSize)}
}

// newSet returns an empty set for a relist to fill, to replace the record.
func (r *lastGood[T]) newSet(size int) *objectSet[T] {
	return newObjectSet(r.seed, size, r.encodedSize)
}

// current returns the record's generation, which a plain watch started now
// works in.
func (r *lastGood[T]) current() uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.generation
}

// replace makes objects the record of a new generation and returns it.
func (r *lastGood[T]) replace(objects *objectSet[T]) uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.objects = objects
	r.generation++
	return r.generation
}

// len returns how many objects the record holds.
func (r *lastGood[T]) len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.objects.len()
}

// encodedBytes returns the sum of the encoded sizes of the objects the
// record holds; 0 if they are not measured.
func (r *lastGood[T]) encodedBytes() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.objects.encodedBytes()
}

// set records t as the last good state of key, unless generation is past.
func (r *lastGood[T]) set(generation uint64, key cache.ObjectName, t T) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if generation == r.generation {
		r.objects.set(key, t)
	}
}

// remove forgets key, unless generation is past.
func (r *lastGood[T]) remove(generation uint64, key cache.ObjectName) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if generation == r.generation {
		r.objects.remove(key)
	}
}

// get returns the last good state of key, if generation is current and it
// has one.
func (r *lastGood[T]) get(generation uint64, key cache.ObjectName) (T, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	t, ok := r.objects.get(key)
	return t, ok && generation == r.generation
}

// overlap returns how many objects of next the record holds, and how many
// it holds in all.
func (r *lastGood[T]) overlap(next *objectSet[T]) (held, before int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, obj := range next.objects {
		if _, ok := r.objects.get(cache.ObjectName{Namespace: obj.GetNamespace(), Name: obj.GetName()}); ok {
			held++
		}
	}
	for key := range next.overflow {
		if _, ok := r.objects.get(key); ok {
			held++
		}
	}
	return held, r.objects.len()
}

// markStale records key, which the record holds, as stale since since,
// unless generation is past.
func (r *lastGood[T]) markStale(generation uint64, key cache.ObjectName, why staleErr, since time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if generation == r.generation {
		r.objects.markStale(key, why, since)
	}
}

// latestStaleness returns the staleness of key in the record now, whatever
// the generation, if key is stale.
func (r *lastGood[T]) latestStaleness(key cache.ObjectName) (Staleness, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.objects.staleness(key)
}

// staleSince is when key became stale, as the record says now, or the time
// now if it is not stale.
func (r *lastGood[T]) staleSince(key cache.ObjectName) time.Time {
	if st, ok := r.latestStaleness(key); ok {
		return st.Since
	}
	return time.Now()
}

// staleness returns the staleness of key, if generation is current and
// key is stale.
func (r *lastGood[T]) staleness(generation uint64, key cache.ObjectName) (Staleness, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	st, ok := r.objects.staleness(key)
	return st, ok && generation == r.generation
}

// restoreStale sets key's staleness back, unless generation is past.
func (r *lastGood[T]) restoreStale(generation uint64, key cache.ObjectName, was Staleness, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if generation == r.generation {
		r.objects.restoreStale(key, was, ok)
	}
}

// latest returns what the record holds of key now, whatever the
// generation, and whether it holds it: the last good state a relist keeps
// of an object whose listed state does not decode.
func (r *lastGood[T]) latest(key cache.ObjectName) (T, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.objects.get(key)
}

// staleObjects returns the stale objects of the record, sorted by key.
func (r *lastGood[T]) staleObjects() []Staleness {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.objects.staleObjects()
}

// staleCount returns how many objects of the record are stale.
func (r *lastGood[T]) staleCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.objects.stale)
}

// each calls f with every object held and its key.
func (s *objectSet[T]) each(f func(key cache.ObjectName, t T)) {
	for _, t := range s.objects {
		f(cache.ObjectName{Namespace: t.GetNamespace(), Name: t.GetName()}, t)
	}
	for key, t := range s.overflow {
		f(key, t)
	}
}

// each calls f with every object of the record and its key, if generation
// is current; f must not call back into the record.
func (r *lastGood[T]) each(generation uint64, f func(key cache.ObjectName, t T)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if generation == r.generation {
		r.objects.each(f)
	}
}
