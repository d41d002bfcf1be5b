package indexguard

import (
	"slices"

	"k8s.io/client-go/tools/cache"
)

// View returns store, whose index functions g guards, as readers see it:
// Index, ByIndex and IndexKeys of an index whose function fails on some
// objects return what they found together with Hooks.Partial's error
// naming those objects; ListIndexFuncValues leaves the guard's own value
// out; GetIndexers returns the functions as they were given, with their
// errors; AddIndexers guards what it adds. Every other method is store's.
func (g *Guard) View(store cache.Indexer) cache.Indexer { return &view{Indexer: store, guard: g} }

type view struct {
	cache.Indexer
	guard *Guard
}

// failing returns the keys of the objects index's function fails on, nil
// if none (or if there is no such index). Until an index function first
// fails, there are none, and it reads nothing.
func (v *view) failing(index string) []string {
	if !v.guard.failed.Load() {
		return nil
	}
	keys, err := v.Indexer.IndexKeys(index, unindexed)
	if err != nil {
		return nil
	}
	return keys
}

// partial is the error of an answer of index read after before, the keys
// failing then: every object whose function failed when the answer was
// read is in before or in the keys failing now, unless its function
// both began and ceased failing in between. nil if there are none.
func (v *view) partial(index string, before []string) error {
	keys := slices.Concat(before, v.failing(index))
	if len(keys) == 0 {
		return nil
	}
	slices.Sort(keys)
	return v.guard.hooks.Partial(index, slices.Compact(keys))
}

// ByIndex returns the objects of indexedValue, as client-go's does, and,
// while the index's function fails on some objects, the error naming
// them: whether they have indexedValue cannot be known.
func (v *view) ByIndex(index, indexedValue string) ([]any, error) {
	before := v.failing(index)
	objs, err := v.Indexer.ByIndex(index, indexedValue)
	if err != nil {
		return nil, err
	}
	if indexedValue == unindexed {
		objs = objs[:0]
	}
	return objs, v.partial(index, before)
}

// IndexKeys is ByIndex's answer as keys.
func (v *view) IndexKeys(index, indexedValue string) ([]string, error) {
	before := v.failing(index)
	keys, err := v.Indexer.IndexKeys(index, indexedValue)
	if err != nil {
		return nil, err
	}
	if indexedValue == unindexed {
		keys = keys[:0]
	}
	return keys, v.partial(index, before)
}

// Index returns the objects that share a value of index with obj, as
// client-go's does, with ByIndex's error while the function fails on
// some objects. If the function fails on obj itself, it returns no
// object and Hooks.IndexError's error.
func (v *view) Index(index string, obj any) ([]any, error) {
	if fn := v.guard.function(index); fn != nil {
		if _, err := fn(obj); err != nil {
			return nil, v.guard.hooks.IndexError(index, keyOf(obj), err)
		}
	}
	before := v.failing(index)
	objs, err := v.Indexer.Index(index, obj)
	if err != nil {
		return nil, err
	}
	return objs, v.partial(index, before)
}

// ListIndexFuncValues returns the values of index, without the guard's own.
func (v *view) ListIndexFuncValues(index string) []string {
	return slices.DeleteFunc(v.Indexer.ListIndexFuncValues(index), func(value string) bool { return value == unindexed })
}

// GetIndexers returns the index functions as they were given: one that
// fails returns its error.
func (v *view) GetIndexers() cache.Indexers { return v.guard.functions() }

// AddIndexers adds index functions to the store, guarded.
func (v *view) AddIndexers(indexers cache.Indexers) error {
	return v.guard.Add(indexers, v.Indexer.AddIndexers)
}
