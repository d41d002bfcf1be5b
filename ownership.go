package generic

import (
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/sharding"

	"github.com/generic-informers/generic/internal/membership"
	"github.com/generic-informers/generic/internal/shardsel"
)

// Ownership is which of an informer's objects this replica's controllers
// own at one moment. Under WithMembership it is a range of the shard
// key's hash space that no other live replica owns (none while the
// replica joins, leaves, or has stepped down; see Membership); otherwise
// every object. The zero Ownership owns every object and never changes.
//
// An Ownership is a value: it does not change. Changed is closed once it
// no longer holds; read the informer's Ownership again then.
type Ownership struct {
	// selector is the owned hashes: nil for every object; none says no
	// object is owned.
	selector sharding.Selector
	none     bool
	// Changed is closed when this Ownership no longer holds; nil when it
	// never changes (no membership).
	Changed <-chan struct{}
}

// Owns reports whether the replica owns obj: whether its shard key (UID or
// namespace, see ShardKey) hashes into the owned range, by apimachinery's
// pkg/sharding, as the API server hashes it. An object whose shard key
// cannot be read (not an object with metadata) is owned by no replica
// under a membership.
func (o Ownership) Owns(obj runtime.Object) bool {
	switch {
	case o.none:
		return false
	case o.selector == nil:
		return true
	}
	owned, err := o.selector.Matches(obj)
	return owned && err == nil
}

// String says what is owned: "all", "none", or the selector of the owned
// hashes, as metav1.ListOptions.ShardSelector writes it.
func (o Ownership) String() string {
	switch {
	case o.none:
		return "none"
	case o.selector == nil:
		return "all"
	}
	return o.selector.String()
}

// owner is what a membership's replica owns, and how it changes: the
// hooks' side of Ownership. A nil owner (no membership) owns every object.
type owner struct {
	mu      sync.Mutex
	owned   membership.Interval
	changed chan struct{}
	// byKey holds the Ownership of owned for each shard key asked for,
	// made once per change rather than at every read (each event of a
	// controller reads it).
	byKey map[ShardKey]Ownership
}

// newMemberOwner returns the owner of a replica of a membership, which
// owns nothing until the membership says so.
func newMemberOwner() *owner {
	return &owner{owned: membership.Interval{Empty: true}, changed: make(chan struct{})}
}

// set makes the replica own owned, and closes the last Ownership's
// Changed.
func (w *owner) set(owned membership.Interval) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.owned = owned
	close(w.changed)
	w.changed = make(chan struct{})
	clear(w.byKey)
}

// ownership returns what is owned now, of key's hash space.
func (w *owner) ownership(key ShardKey) Ownership {
	if w == nil {
		return Ownership{}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if o, ok := w.byKey[key]; ok {
		return o
	}
	o := Ownership{none: true, Changed: w.changed}
	if !w.owned.Empty {
		o = Ownership{selector: sharding.NewSelector(rangeOf(string(key), w.owned)), Changed: w.changed}
	}
	if w.byKey == nil {
		w.byKey = map[ShardKey]Ownership{}
	}
	w.byKey[key] = o
	return o
}

// rangeOf is the ShardSelector requirement of the hashes of interval i,
// which is not empty.
func rangeOf(key string, i membership.Interval) sharding.ShardRangeRequirement {
	return sharding.ShardRangeRequirement{Key: key, Start: shardsel.Hex(i.Lo), End: shardsel.HexAfter(i.Last)}
}
