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
// Under the names, the factories are generic.GenericInformerFactory values
// over a generic.Factory of *unstructured.Unstructured fed by the dynamic
// client, as client-go's are. Code that wants the typed API (typed event
// handlers with tombstones unwrapped, typed indexers, ByIndex, one Handle
// per hold, one lifecycle with the typed informers, controller.For) asks
// the one factory for the informer instead: typed.UnstructuredFor, which
// syncs faster but shares less (on realistic Pods, 54.5 KB an object
// against this package's 13 KB; docs/performance.md).
//
// One difference is on purpose: the objects the factories cache share
// every map and list equal to one cached before, a cache several times
// smaller than dynamicinformer's (on realistic Pods an eighth, and 0.47×
// what client-go's typed informer holds). Objects read from a cache are
// read-only, in client-go as here; a write into one in place (the bug
// client-go's cache mutation detector, KUBE_CACHE_MUTATION_DETECTOR=true,
// catches, here as there) changes every object that shares what it wrote
// into. WithoutSharing makes a factory whose objects share nothing, as
// dynamicinformer's.
package unstructured
