package generic

import "time"

// SyncProgress is how far an informer's initial sync has come: the
// objects received from the server so far, and how fast. Status has it;
// the informer also logs it, through the klog logger of the context it
// runs with, at verbosity 2 (ProgressLogVerbosity): at most once every
// ProgressLogInterval while objects come in, and once when the cache is
// filled.
type SyncProgress struct {
	// Received counts the objects the server sent in the initial list
	// (every page, those the ingest then rejected or filtered out
	// included), or in the initial events of a WatchList stream. It stops
	// at the end of that list or stream; zero before Run.
	Received int64
	// Started is when Run started the informer; zero before.
	Started time.Time
	// Elapsed is the time from Started until now, or, once Done, until
	// the cache was filled.
	Elapsed time.Duration
	// Rate is Received per second of Elapsed (0 when Elapsed is 0).
	Rate float64
	// Done: the cache has been filled (HasSynced).
	Done bool
}

const (
	// ProgressLogVerbosity is the klog verbosity of the initial sync's
	// progress lines.
	ProgressLogVerbosity = 2
	// ProgressLogInterval is the least time between two progress lines of
	// one informer.
	ProgressLogInterval = 2 * time.Second
)
