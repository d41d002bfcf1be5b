// Package membership is the protocol by which the replicas of a controller
// share the shards of their informers among themselves, with nothing
// outside them to coordinate (issue 28): each replica holds a Lease of its
// own; the live Leases, ordered by identity, are the view, and a replica's
// place in the view is its shard (index of count).
//
// When the view changes (a replica joins, leaves, or its Lease expires),
// every replica moves to its shard of the new view in steps, each said in
// its Lease (an Announcement), so that no object is in no replica's cache
// and no object is owned (reconciled) by two replicas:
//
//  1. Widen: it caches the union of what it caches and its new shard, and
//     announces the view, Widened. It owns what it owned.
//  2. Narrow: once every member of the view has announced it (Widened or
//     Narrowed), it caches its new shard alone, and announces Narrowed. It
//     owns what it owned that is in its new shard.
//  3. Own: once every member of the view has announced it Narrowed, it owns
//     its whole new shard: every other member then owns only what is in
//     its own new shard, and the new shards are disjoint.
//
// A replica that leaves cleanly announces Leaving: it owns nothing from
// then on, the others leave it out of the view, and it keeps its cache
// until every member of the new view has narrowed to it, then releases its
// Lease. A replica whose Lease others see expire is left out of their view
// at once (its objects are in no cache until the others have widened); a
// replica that cannot renew its Lease steps down (owns nothing) before the
// others can see the Lease expire (the runner's RenewDeadline is shorter
// than the LeaseDuration).
//
// A replica that dies leaves its Lease behind: once a replica owns
// its whole shard of a view that leaves out a member whose Lease expired
// (the others have taken its shard), it deletes that Lease, on the
// condition that its resourceVersion is still the one it read when it took
// it for expired. A Lease renewed since (the replica was only cut off) is
// live again and stays (Conflict); one another replica deleted first is
// gone (NotFound); neither is an error, and any replica may delete. So the
// group's Leases do not grow with every crash, and a replica that joins
// later never counts a dead replica's Lease live for a LeaseDuration from
// its first read of it (liveness is judged by the local clock, as client-go's
// leader election judges it), which would hold back its join that long.
//
// A Runner's Status takes what the replica announced and whether it owns
// its shard from its State, the one place they are kept, whatever changed
// them (a step, a leave, the watchdog): from the start of a clean leave on,
// Status says Leaving and owns nothing.
//
// A replica reads the others' Leases through an informer, which lags. A
// step that shrinks its cache or grows what it owns (Narrow, Release, Own:
// Action.NeedsConsistentRead) is confirmed on the Leases as the API server
// holds them before it is done: a late read could show an announcement
// made for an earlier view equal to the current one (a replica joined and
// left since), and a replica leaving would release its Lease to nobody.
//
// The package decides; it does no I/O. Next is the whole protocol: from
// the members a replica sees and its own state, the next step. The package
// imports nothing of this module.
package membership
