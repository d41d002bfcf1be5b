package generic

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// ErrUnexpectedType is wrapped by every error that reports a value of
// another Go type than the one a Lister, Informer or Converter serves, for
// example an indexer shared with code that stores other types. Test for it
// with errors.Is.
var ErrUnexpectedType = errors.New("unexpected object type")

// ConversionError reports an object that a Converter rejected at ingest.
// The object is skipped: it is not stored in the cache, and handlers never
// see it; every other object is still served. It reaches the ErrorHandler
// given with WithErrorHandler.
type ConversionError struct {
	// GVR is the resource the object was listed or watched from.
	GVR schema.GroupVersionResource
	// Key is the object's cache key: "namespace/name", or "name" for a
	// cluster-scoped object. It is empty when the object has no readable
	// metadata.
	Key string
	// Err is what the Converter returned.
	Err error
}

// Error says which object of which resource did not convert, and why.
func (e *ConversionError) Error() string {
	return fmt.Sprintf("convert %s %q: %v", e.GVR, e.Key, e.Err)
}

// Unwrap returns the Converter's error.
func (e *ConversionError) Unwrap() error { return e.Err }

// IndexError reports an index function that failed on an object. client-go's
// indexer panics on such an error; informers built by this package catch it,
// report it to the ErrorHandler and leave the object out of that one index
// instead, and every read of that index says so with a *PartialIndexError
// for as long as the function fails on the object. Informer().GetIndexer()'s
// Index returns one, with no object, when the function fails on the object
// it was given.
type IndexError struct {
	// Index is the name of the index whose function failed.
	Index string
	// Key is the object's cache key, as in ConversionError.
	Key string
	// Err is what the index function returned.
	Err error
}

// Error says which index failed on which object, and why.
func (e *IndexError) Error() string {
	return fmt.Sprintf("index %q of %q: %v", e.Index, e.Key, e.Err)
}

// Unwrap returns the index function's error.
func (e *IndexError) Unwrap() error { return e.Err }

// PartialIndexError says that an answer of an index may be incomplete: the
// index's function fails on the objects of Keys (each was reported to the
// ErrorHandler as an *IndexError), so they are in none of the index's
// values. Which values they would have had cannot be known, so every
// answer of the index comes with this error while any object fails it:
// Lister.ByIndex and NamespaceLister.ByIndex (whose Keys are then those of
// its namespace, and which return no error if there are none), and the
// Index, ByIndex and IndexKeys of an informer's Informer().GetIndexer().
// The objects returned beside it are those the index holds for the value:
// correct, but maybe not all. Test for it with errors.As.
//
// An object leaves Keys when its index function succeeds on a later state
// of it, or when it is deleted: Keys never holds more than the objects the
// function fails on now. The objects and the keys are read one after the
// other; an object whose function failed when the objects were read is in
// Keys, unless its function both began and ceased failing during the read.
type PartialIndexError struct {
	// Index is the name of the index.
	Index string
	// Keys are the cache keys of the objects the index function fails on,
	// "namespace/name" or "name", sorted; there is at least one.
	Keys []string
}

// maxKeysInMessage is the most keys a PartialIndexError's message names.
const maxKeysInMessage = 5

// Error names the index and the objects it leaves out (the first few of
// them, and how many others).
func (e *PartialIndexError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "index %q is partial: its function fails on %d object", e.Index, len(e.Keys))
	if len(e.Keys) != 1 {
		b.WriteString("s")
	}
	b.WriteString(" (")
	for i, key := range e.Keys[:min(len(e.Keys), maxKeysInMessage)] {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%q", key)
	}
	if more := len(e.Keys) - maxKeysInMessage; more > 0 {
		fmt.Fprintf(&b, " and %d more", more)
	}
	b.WriteString("), which the index holds under no value")
	return b.String()
}

// OptionConflictError is the error of an Acquire (typed.InformerFor and
// the rest) whose Options differ from those of the shared informer of its
// selection in a way that cannot be honoured on it: an Option that cannot
// change on a running informer (WithTransform, WithStripManagedFields,
// WithCompactStore, WithResyncPeriod, WithTweakListOptions,
// WithErrorHandler, WithStateHandler, WithStopWhenNotServed,
// WithMetricsProvider, WithInformerName) set otherwise, or an index of
// WithIndexers that the informer has with another function. Nothing is
// acquired then. Test for it with errors.As.
type OptionConflictError struct {
	// Selection is the informer the Acquire would share.
	Selection Selection
	// Option names the option as it is written in Go: "WithTransform",
	// `WithIndexers("byNode")`.
	Option string
	// Current is the informer's setting; Requested is the Acquire's (its
	// own Options over the Registry's), as text: a duration, "on" or
	// "off", "none", the name of a function's code.
	Current, Requested string
}

// Error names the informer, the option and both settings.
func (e *OptionConflictError) Error() string {
	return fmt.Sprintf("generic: Acquire of %s: %s: the shared informer has %s, this Acquire asks for %s: it cannot change on a running informer; "+
		"acquire with the informer's setting, or from another view (NewFactoryOn) for an informer of its own",
		e.Selection.text(), e.Option, e.Current, e.Requested)
}

// SyncError reports the informers that did not sync before the context of
// Factory.WaitForCacheSync ended, and why.
type SyncError struct {
	// Unsynced holds the Status of each informer that did not sync, sorted
	// by resource.
	Unsynced []Status
	// Err is the context's error if the wait ended with it, else nil
	// (every informer left synced or stopped).
	Err error
}

func newSyncError(unsynced []Status, err error) *SyncError {
	slices.SortFunc(unsynced, func(a, b Status) int { return strings.Compare(a.GVR.String(), b.GVR.String()) })
	return &SyncError{Unsynced: unsynced, Err: err}
}

// Error lists each resource that did not sync and why, in one line.
func (e *SyncError) Error() string {
	var b strings.Builder
	b.WriteString("caches not synced: ")
	for i, s := range e.Unsynced {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%s: %s", s.GVR, syncFailureReason(s, e.Err))
	}
	return b.String()
}

// Unwrap returns the context's error, if any, and the last error of each
// informer that did not sync, so that errors.Is and errors.As see them all.
//
// apierrors' predicates (IsForbidden, IsNotFound, ...) look at the first
// API error they find, so the errors of Forbidden informers come first:
// apierrors.IsForbidden(err) holds whenever any informer was forbidden,
// whatever other resources failed with. An RBAC rule never fixes itself; a
// resource not yet served may.
func (e *SyncError) Unwrap() []error {
	errs := make([]error, 0, len(e.Unsynced)+1)
	if e.Err != nil {
		errs = append(errs, e.Err)
	}
	for _, forbidden := range []bool{true, false} {
		for _, s := range e.Unsynced {
			if s.LastError != nil && (s.State == Forbidden) == forbidden {
				errs = append(errs, s.LastError)
			}
		}
	}
	return errs
}

// syncFailureReason says in words why an informer did not sync.
func syncFailureReason(s Status, ctxErr error) string {
	var reason string
	switch s.State {
	case NotServed:
		reason = "not served"
	case Forbidden:
		reason = "forbidden"
	case Stopped:
		reason = "stopped"
	default:
		reason = fmt.Sprintf("still syncing when the wait ended (%v)", ctxErr)
	}
	if s.LastError != nil {
		reason += ": " + s.LastError.Error()
	}
	return reason
}
