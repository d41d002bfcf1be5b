// Package listwatch is the list/watch chain of one informer: what stands
// between its source (a cache.ListerWatcher over a client) and client-go's
// reflector. Every object reaches the informer's cache through it, from
// every kind of source:
//
//		source -> requests -> ingest -> served guard -> reflector
//
//	  - requests (requests.go) counts the requests sent to the server, and
//	    the objects of the initial list;
//	  - ingest (ingest.go, watch.go, record.go, stale.go) turns each object
//	    into T, once, per item: one that cannot be decoded or converted is
//	    reported and skipped, and a known object that turns bad keeps its
//	    last good state, marked stale, taken from the ingest's own record of
//	    what it delivered, never from the cache; a delete is never inferred
//	    from an error;
//	  - the shard filter (shard.go) sets the ShardSelector of every request
//	    and keeps only the shard's objects (KEP-5866), whether the server
//	    applied the selector or not;
//	  - the served guard (served.go) turns a resource the server stops
//	    serving (404) into the empty list it now is, holds the list of a
//	    resource never served (a CRD not installed yet), parks the
//	    reflector's watches and probes the server with backoff, or at once
//	    when told the resources served changed, until it serves the
//	    resource.
//
// The chain reads nothing above it: not the cache, not the informer. It
// reports upward only through the hooks it is handed (Hooks): an object
// rejected, what the server answered (for the informer's state machine),
// what it measured (a Meter), and it asks the shard selection to request and
// whether the resources served changed.
// It imports nothing of this module.
package listwatch
