package generic

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/sharding"

	"github.com/generic-informers/generic/internal/shardsel"
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

// shardRange is the shard as internal/shardsel takes it.
func (s Shard) shardRange() shardsel.Range { return shardsel.Range{Index: s.Index, Count: s.count()} }

// shardOf is the Shard of a shardsel.Range.
func shardOf(r shardsel.Range) Shard { return Shard{Index: r.Index, Count: r.Count} }

// shardState is the shard the informers that share it select, and how it
// changes (internal/shardsel): a Factory's informers share the factory's;
// WithShard given to one informer gives it one of its own. owner is what
// a membership's replica owns of it (nil without one: every object).
type shardState struct {
	state *shardsel.State
	owner *owner
}

func newShardState(s Shard) *shardState { return &shardState{state: shardsel.New(s.shardRange())} }

// selection returns the list/watch chain's hook that reads the selection
// of key's hash space to request now (see listwatch.Hooks.Selection).
func (s *shardState) selection(key ShardKey) func() (sharding.Selector, uint64, <-chan struct{}) {
	return func() (sharding.Selector, uint64, <-chan struct{}) { return s.state.Selection(string(key)) }
}

// selector is the shard selector of key's hash space selected now (nil:
// every object).
func (s *shardState) selector(key ShardKey) sharding.Selector {
	selector, _, _ := s.state.Selection(string(key))
	return selector
}

// shard returns the shard selected, and the one being widened to (the
// last, if a membership widened to several).
func (s *shardState) shard() (current Shard, widened *Shard) {
	c, w := s.state.Ranges()
	if len(w) > 0 {
		next := shardOf(w[len(w)-1])
		widened = &next
	}
	return shardOf(c), widened
}

// describe describes the shard for an informer's Status: "" when it
// holds every object; while a reshard is under way, "current+next" (and
// "+next" for each further shard a membership widened to).
func (s *shardState) describe() string {
	c, widened := s.state.Ranges()
	current := shardOf(c)
	if current.all() && len(widened) == 0 {
		return ""
	}
	parts := []string{current.String()}
	for _, w := range widened {
		parts = append(parts, shardOf(w).String())
	}
	return strings.Join(parts, "+")
}

// widen selects the union of the current shard and next, a valid one
// first, and returns the generation that selection has (shardsel.Widen).
func (s *shardState) widen(next Shard) (uint64, error) {
	if err := next.validate(); err != nil {
		return 0, err
	}
	return s.state.Widen(next.shardRange())
}

// narrow selects next, a valid one, alone and returns the generation that
// selection has.
func (s *shardState) narrow(next Shard) (uint64, error) {
	if err := next.validate(); err != nil {
		return 0, err
	}
	return s.state.Narrow(next.shardRange()), nil
}

// errShardKey is a ShardKey that is neither of the two the server knows.
var errShardKey = errors.New("generic: unknown ShardKey: want ShardByUID or ShardByNamespace")

func (k ShardKey) validate() error {
	if k != ShardByUID && k != ShardByNamespace {
		return fmt.Errorf("%w, got %q", errShardKey, string(k))
	}
	return nil
}
