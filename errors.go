package generic

import (
	"errors"
	"fmt"

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

func (e *ConversionError) Error() string {
	return fmt.Sprintf("convert %s %q: %v", e.GVR, e.Key, e.Err)
}

func (e *ConversionError) Unwrap() error { return e.Err }

// IndexError reports an index function that failed on an object. client-go's
// indexer panics on such an error; informers built by this package catch it,
// report it and leave the object out of that one index instead.
type IndexError struct {
	// Index is the name of the index whose function failed.
	Index string
	// Key is the object's cache key, as in ConversionError.
	Key string
	// Err is what the index function returned.
	Err error
}

func (e *IndexError) Error() string {
	return fmt.Sprintf("index %q of %q: %v", e.Index, e.Key, e.Err)
}

func (e *IndexError) Unwrap() error { return e.Err }
