package generic

import (
	"errors"
	"fmt"
	"math/bits"
	"strconv"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/sharding"
)

// Shard is one of Count contiguous, equal ranges of the 64-bit FNV-1a hash
// space of a shard key (KEP-5866, sharded list and watch): the objects
// whose key hashes into range Index. The Count shards of a resource are
// disjoint and together hold every object.
//
// Range i is [i·2^64/Count, (i+1)·2^64/Count), rounded down, written as
// metav1.ListOptions.ShardSelector documents it: 16 lowercase hex digits
// with a 0x prefix, and 0x10000000000000000 (2^64) as the last upper bound;
// for example Shard{Index: 1, Count: 2} is
//
//	shardRange(object.metadata.uid, '0x8000000000000000', '0x10000000000000000')
//
// Count 1 is every object, and sets no ShardSelector.
type Shard struct {
	// Index is the shard's number, in [0, Count).
	Index int
	// Count is how many shards the objects are split into, at least 1.
	Count int
}

// ShardKey is the field whose hash places an object in a shard, as
// metav1.ListOptions.ShardSelector names it.
type ShardKey string

const (
	// ShardByUID places each object by its metadata.uid: objects spread
	// evenly, and an object stays in its shard for its whole life.
	ShardByUID ShardKey = "object.metadata.uid"
	// ShardByNamespace places each object by its namespace: a namespace's
	// objects share a shard. Cluster-scoped objects all hash "" and share
	// one shard.
	ShardByNamespace ShardKey = "object.metadata.namespace"
)

// String returns the shard as "index/count" ("1/3"), as kwatch's --shard
// flag takes it.
func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.Index, s.count()) }

func (s Shard) count() int { return max(s.Count, 1) }

// all reports whether the shard holds every object.
func (s Shard) all() bool { return s.count() == 1 }

// ParseShard parses "index/count" ("1/3"), as Shard.String writes it and
// kwatch's --shard takes it, into a valid Shard.
func ParseShard(s string) (Shard, error) {
	index, count, ok := strings.Cut(s, "/")
	i, errIndex := strconv.Atoi(index)
	n, errCount := strconv.Atoi(count)
	if !ok || errIndex != nil || errCount != nil {
		return Shard{}, fmt.Errorf("generic: shard %q: want index/count, for example 1/3", s)
	}
	shard := Shard{Index: i, Count: n}
	return shard, shard.validate()
}

// validate returns an error unless 1 <= Count and 0 <= Index < Count: the
// shards WithShard, Reshard and ParseShard take.
func (s Shard) validate() error {
	if s.Count < 1 {
		return fmt.Errorf("generic: invalid shard %d/%d: count must be at least 1", s.Index, s.Count)
	}
	if s.Index < 0 || s.Index >= s.Count {
		return fmt.Errorf("generic: invalid shard %d/%d: want 0 <= index < count", s.Index, s.Count)
	}
	return nil
}

// bound is the lower bound of range i of n, as the ShardSelector writes
// it: i·2^64/n, rounded down, in 16 hex digits; 2^64 for i = n.
func bound(i, n int) string {
	if i >= n {
		return "0x10000000000000000"
	}
	quotient, _ := bits.Div64(uint64(i), 0, uint64(n)) // (i·2^64)/n; i < n, so it fits
	return fmt.Sprintf("0x%016x", quotient)
}

// requirement is the shard's range of key's hash space.
func (s Shard) requirement(key ShardKey) sharding.ShardRangeRequirement {
	return sharding.ShardRangeRequirement{Key: string(key), Start: bound(s.Index, s.count()), End: bound(s.Index+1, s.count())}
}

// shardView is what one list or watch request is made with: the shard
// selector (nil: every object) and the generation of the shardState it was
// read at.
type shardView struct {
	selector   sharding.Selector
	generation uint64
}

// ShardSelector returns the selector's wire form for
// metav1.ListOptions.ShardSelector; "" for every object.
func (v shardView) ShardSelector() string {
	if v.selector == nil {
		return ""
	}
	return v.selector.String()
}

// shardState is the shard the informers that share it select, and how it
// changes. A Factory's informers share the factory's; WithShard given to
// one informer gives it one of its own.
//
// Resharding moves from one shard to the next in two steps, so that no
// object is left out of every replica's cache: widen selects the union of
// the two shards; narrow selects the next one alone. Each step that
// changes the selection bumps the generation and closes changed, which
// makes every watch made at an older generation end (see ingest), so that
// the reflector relists with the new selection.
type shardState struct {
	mu      sync.Mutex
	current Shard
	// widened is the shard the current one is being widened to, or nil.
	widened    *Shard
	generation uint64
	changed    chan struct{}
}

func newShardState(s Shard) *shardState {
	return &shardState{current: s, changed: make(chan struct{})}
}

// view returns the selection of key's hash space to request now, and a
// channel closed when it changes.
func (s *shardState) view(key ShardKey) (shardView, <-chan struct{}) {
	if s == nil {
		return shardView{}, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return shardView{selector: s.selectorLocked(key), generation: s.generation}, s.changed
}

func (s *shardState) selectorLocked(key ShardKey) sharding.Selector {
	shards := []Shard{s.current}
	if s.widened != nil {
		shards = append(shards, *s.widened)
	}
	var reqs []sharding.ShardRangeRequirement
	for _, shard := range shards {
		// Shards are validated where they are given.
		if shard.all() {
			return nil
		}
		reqs = append(reqs, shard.requirement(key))
	}
	return sharding.NewSelector(reqs...)
}

// selection returns the list/watch chain's hook that reads the selection
// of key's hash space to request now (see listwatch.Hooks.Selection).
func (s *shardState) selection(key ShardKey) func() (sharding.Selector, uint64, <-chan struct{}) {
	return func() (sharding.Selector, uint64, <-chan struct{}) {
		v, changed := s.view(key)
		return v.selector, v.generation, changed
	}
}

// selector is the shard selector of key's hash space selected now (nil:
// every object).
func (s *shardState) selector(key ShardKey) sharding.Selector {
	v, _ := s.view(key)
	return v.selector
}

// describe describes the shard for an informer's Status: "" when it
// holds every object; while a reshard is under way, "current+next".
func (s *shardState) describe() string {
	current, widened := s.shard()
	if current.all() && widened == nil {
		return ""
	}
	if widened != nil {
		return fmt.Sprintf("%v+%v", current, *widened)
	}
	return current.String()
}

// shard returns the shard selected, and the one being widened to.
func (s *shardState) shard() (current Shard, widened *Shard) {
	if s == nil {
		return Shard{}, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.current, s.widened
}

// widen selects the union of the current shard and next, and returns the
// generation that selection has. It changes nothing when that is already
// the selection.
func (s *shardState) widen(next Shard) (uint64, error) {
	if err := next.validate(); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.current == next || (s.widened != nil && *s.widened == next) {
		return s.generation, nil
	}
	if s.widened != nil {
		return 0, fmt.Errorf("generic: resharding to %v has begun; finish it (Reshard(%d, %d)) before widening to %v", *s.widened, s.widened.Index, s.widened.Count, next)
	}
	s.widened = &next
	return s.bumpLocked(), nil
}

// narrow selects next alone and returns the generation that selection has.
// It changes nothing when that is already the selection.
func (s *shardState) narrow(next Shard) (uint64, error) {
	if err := next.validate(); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.current == next && s.widened == nil {
		return s.generation, nil
	}
	s.current, s.widened = next, nil
	return s.bumpLocked(), nil
}

func (s *shardState) bumpLocked() uint64 {
	s.generation++
	close(s.changed)
	s.changed = make(chan struct{})
	return s.generation
}

// errShardKey is a ShardKey that is neither of the two the server knows.
var errShardKey = errors.New("generic: unknown ShardKey: want ShardByUID or ShardByNamespace")

func (k ShardKey) validate() error {
	if k != ShardByUID && k != ShardByNamespace {
		return fmt.Errorf("%w, got %q", errShardKey, string(k))
	}
	return nil
}
