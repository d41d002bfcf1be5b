// Package indexguard keeps an informer's index functions from panicking
// client-go's store, and keeps track of the objects they could not index,
// so that no read of an index passes a partial answer for a whole one.
//
// client-go's thread-safe store panics when an index function returns an
// error. Guard wraps each function: an error is reported (Hooks.Report)
// and the object is filed under a value of its own, unindexed, which no
// read of the index returns. The store itself then keeps, under its own
// lock, the keys of the objects each index's function fails on, exactly
// as long as it fails: an update the function indexes moves the key out,
// a delete drops it, a Replace rebuilds the set; it is never larger than
// the number of objects the function fails on. View reads the store: an
// answer of an index that holds such keys comes with Hooks.Partial's error
// naming them, beside the objects found.
//
// It imports nothing of this module.
package indexguard

import (
	"errors"
	"maps"
	"sync"
	"sync/atomic"

	"k8s.io/client-go/tools/cache"
)

// unindexed is the index value under which the store keeps the objects an
// index function failed on. It begins with a NUL byte, which no label,
// name or field value holds, and no read of the guard returns it.
const unindexed = "\x00generic: the index function failed on these objects"

// Hooks are what a Guard tells and asks of the informer.
type Hooks struct {
	// Report is told of each failure of an index function, with the error
	// IndexError made of it; it must not block, and must not read the
	// store: it is called with the store locked.
	Report func(error)
	// IndexError is the error of index's function failing on the object
	// of key ("" when it has none), with err the function's error.
	IndexError func(index, key string, err error) error
	// Partial is the error of an answer of index that leaves out the
	// objects of keys, whose index function fails: keys are sorted, and
	// there is at least one.
	Partial func(index string, keys []string) error
}

// errNilFunction is the error of a nil index function, reported once and
// left out.
var errNilFunction = errors.New("nil index function; the index is left out")

// Guard guards an informer's index functions (Indexers, Add) and reads its
// store (View). It is safe for concurrent use.
type Guard struct {
	hooks Hooks
	// failed is set at the first failure of any index function, and stays
	// set: until then, reads need not look for failing keys.
	failed atomic.Bool
	// fns are the functions the store's indexes were given, by index name,
	// before the guard, so that a read can call one and get its error.
	mu  sync.RWMutex
	fns cache.Indexers
}

// New returns a Guard with no index.
func New(hooks Hooks) *Guard { return &Guard{hooks: hooks, fns: cache.Indexers{}} }

// Indexers returns indexers guarded, for a store made with them (the
// informer's own): every function but nil ones, which are reported and
// left out.
func (g *Guard) Indexers(indexers cache.Indexers) cache.Indexers {
	guarded := g.wrap(indexers)
	g.record(indexers)
	return guarded
}

// Add adds indexers, guarded, through add (the shared informer's
// AddIndexers, or the store's), and keeps them if add succeeds.
func (g *Guard) Add(indexers cache.Indexers, add func(cache.Indexers) error) error {
	if err := add(g.wrap(indexers)); err != nil {
		return err
	}
	g.record(indexers)
	return nil
}

// record keeps the functions of indexers that wrap did not leave out.
func (g *Guard) record(indexers cache.Indexers) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for name, fn := range indexers {
		if fn != nil {
			g.fns[name] = fn
		}
	}
}

// function returns the function of index name as it was given, nil if it
// has none.
func (g *Guard) function(name string) cache.IndexFunc {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return g.fns[name]
}

// functions returns a copy of every index's function as it was given.
func (g *Guard) functions() cache.Indexers {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return maps.Clone(g.fns)
}

// wrap returns indexers with each function guarded; a nil one is reported
// and left out.
func (g *Guard) wrap(indexers cache.Indexers) cache.Indexers {
	guarded := make(cache.Indexers, len(indexers))
	for name, fn := range indexers {
		if fn == nil {
			g.hooks.Report(g.hooks.IndexError(name, "", errNilFunction))
			continue
		}
		guarded[name] = func(obj any) ([]string, error) {
			values, err := fn(obj)
			if err != nil {
				g.failed.Store(true)
				g.hooks.Report(g.hooks.IndexError(name, keyOf(obj), err))
				return []string{unindexed}, nil
			}
			return values, nil
		}
	}
	return guarded
}

// keyOf is the cache key of obj, tombstones included, or "" if it has none.
func keyOf(obj any) string {
	key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		return ""
	}
	return key
}
