package membership

import "github.com/generic-informers/generic/internal/shardsel"

// Phase is how far a replica has moved to the view it announces.
type Phase string

const (
	// Widened: it caches the union of what it cached and its shard of
	// the view.
	Widened Phase = "Widened"
	// Narrowed: it caches its shard of the view alone.
	Narrowed Phase = "Narrowed"
)

// Announcement is what a replica says in its Lease: the view it moves to
// (its Fingerprint), how far it has moved, and whether it is leaving.
type Announcement struct {
	View    string
	Phase   Phase
	Leaving bool
}

// Member is a replica whose Lease is live, as another reads its Lease.
type Member struct {
	Identity string
	Announcement
}

// State is a replica's own: what it announced last, and whether it owns
// its whole shard of that view (step 3).
type State struct {
	Announced Announcement
	Owns      bool
}

// Action is what a Step does.
type Action int

const (
	// Wait: nothing to do until what the replica sees changes.
	Wait Action = iota
	// Widen: cache the union of what it caches and Shard, then announce.
	Widen
	// Narrow: cache Shard alone, own what it owns within Shard, then
	// announce.
	Narrow
	// Own: own the whole of Shard.
	Own
	// Release: leaving, and every member of the view without it has
	// narrowed to it: drop the cache and release the Lease.
	Release
	// StepDown: its own Lease is not live: own nothing.
	StepDown
)

// NeedsConsistentRead reports whether a step of the action must be
// decided on the Leases as the API server holds them (a list, not an
// informer's copy) before it is done: Narrow and Release, which shrink a
// cache, and Own, which grows what a replica owns. An announcement read
// late may be one made for an earlier view equal to the current one (a
// replica joined and left again since), which these steps must not trust.
// Widen and StepDown are safe on any read.
func (a Action) NeedsConsistentRead() bool {
	return a == Narrow || a == Own || a == Release
}

func (a Action) String() string {
	return [...]string{"Wait", "Widen", "Narrow", "Own", "Release", "StepDown"}[a]
}

// Step is a replica's next step.
type Step struct {
	Action Action
	// View is the view it moves to, and Shard its shard of it (Widen,
	// Narrow, Own).
	View  View
	Shard shardsel.Range
	// Announce is what it announces once the step is done (Widen,
	// Narrow).
	Announce Announcement
}

// Next returns the next step of the replica self, given the replicas
// whose Leases are live as it sees them (itself among them if its own
// Lease is live) and its own state. The runner does the step (reshards its
// informers, writes its Lease) and calls Next again, at once and whenever
// what it sees changes.
func Next(self string, members []Member, own State) Step {
	if !holds(members, self) {
		return Step{Action: StepDown}
	}
	view := ViewOf(identities(members, self, own.Announced.Leaving))
	fingerprint := view.Fingerprint()
	announced := announcements(members)
	announced[self] = own.Announced // its own, whatever the others last read
	if own.Announced.Leaving {
		if all(view, announced, fingerprint, Narrowed) {
			return Step{Action: Release, View: view}
		}
		return Step{Action: Wait, View: view}
	}
	shard, _ := view.ShardOf(self)
	step := Step{View: view, Shard: shard}
	switch {
	case own.Announced.View != fingerprint:
		step.Action, step.Announce = Widen, Announcement{View: fingerprint, Phase: Widened}
	case own.Announced.Phase == Widened && all(view, announced, fingerprint, Widened):
		step.Action, step.Announce = Narrow, Announcement{View: fingerprint, Phase: Narrowed}
	case own.Announced.Phase == Narrowed && !own.Owns && all(view, announced, fingerprint, Narrowed):
		step.Action = Own
	}
	return step
}

// holds reports whether members holds identity.
func holds(members []Member, identity string) bool {
	for _, m := range members {
		if m.Identity == identity {
			return true
		}
	}
	return false
}

// identities returns the identities of the members that are not leaving,
// self among them unless it is leaving (its own Leaving is what it
// announces, whatever the others last read of it).
func identities(members []Member, self string, selfLeaving bool) []string {
	var ids []string
	for _, m := range members {
		leaving := m.Leaving
		if m.Identity == self {
			leaving = selfLeaving
		}
		if !leaving {
			ids = append(ids, m.Identity)
		}
	}
	return ids
}

func announcements(members []Member) map[string]Announcement {
	out := make(map[string]Announcement, len(members))
	for _, m := range members {
		out[m.Identity] = m.Announcement
	}
	return out
}

// all reports whether every member of view has announced it, at least as
// far as phase (Narrowed is further than Widened).
func all(view View, announced map[string]Announcement, fingerprint string, phase Phase) bool {
	for _, identity := range view {
		a := announced[identity]
		if a.View != fingerprint || a.Phase == "" || (phase == Narrowed && a.Phase != Narrowed) {
			return false
		}
	}
	return true
}
