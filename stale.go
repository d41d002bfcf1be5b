package generic

import "time"

// StaleObject is an object an informer's cache holds at its last good
// state although the server has a newer one that did not decode, convert
// or transform: a custom resource that drifted from the controller's Go
// type, say (see Status.Stale).
type StaleObject struct {
	// Key is its cache key, "namespace/name" or "name".
	Key string
	// ResourceVersion is that of the newer state ("" if it could not be
	// read); the cached object carries an older one.
	ResourceVersion string
	// Err is why the newer state did not decode, convert or transform
	// (the cause of the *ConversionError reported for it).
	Err error
	// Since is when the informer first met a state of the object it could
	// not take, since it last took one.
	Since time.Time
}

// StaleObjects returns the objects informer's cache holds at their last
// good state although the server has a newer state of each that did not
// decode, convert or transform, sorted by key: how many there are is
// informer.Status().Stale. Such an object is never delivered as deleted,
// since the server still has it (a delete is a fact from the server, never
// an inference from an error, as in client-go); it stays as it last was
// until a state of it is good again (an update from the last good state
// then reaches the handlers) or the server deletes it. A WaitForWrite of
// the state it could not take returns an error wrapping ErrStale.
//
// It is nil when there are none, and for an Informer[T] that has no
// method StaleObjects() []StaleObject: this library's informers (those of
// a Factory, their Handles, NewInformer's) and generictest's have it; a
// wrapper of one can forward it. A Handle's are those of the informer that
// holds its hold now. Safe for concurrent use; it copies what it returns.
func StaleObjects[T Object](informer Informer[T]) []StaleObject {
	if s, ok := informer.(interface{ StaleObjects() []StaleObject }); ok && !isNilPointer(informer) {
		return s.StaleObjects()
	}
	return nil
}
