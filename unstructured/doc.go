// Package unstructured is the dynamic instantiation of the generic core:
// informers and listers of *unstructured.Unstructured, keyed by
// GroupVersionResource and fed by client-go's dynamic client.
//
// It is a drop-in replacement for client-go's dynamic/dynamicinformer and
// dynamic/dynamiclister: it exports every name of both packages with the
// same signature and behaviour, WatchList semantics included. Migrating is
// changing the import paths, keeping the package names:
//
//	import (
//		dynamicinformer "github.com/generic-informers/generic/unstructured"
//		dynamiclister "github.com/generic-informers/generic/unstructured"
//	)
//
// Under the names, every informer is a generic.Informer of
// *unstructured.Unstructured from a generic.Factory: NewFactory returns that
// factory for code that wants the typed API (typed event handlers with
// tombstones unwrapped, typed indexers, ByIndex).
package unstructured
