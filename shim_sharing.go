package generic

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/generic-informers/generic/internal/share"
)

// dropInSharing is what a GenericInformerFactory[T] shares at ingest:
// nothing, and for T = *unstructured.Unstructured (the drop-in for
// dynamicinformer) what repeats across the dynamic client's objects, by
// one share.Interner for the factory's informers, after any transform
// (withIngestSharing):
//
//   - strings that repeat across objects (keys, kinds, namespaces, label
//     keys and values, field managers) are one string each;
//   - every map and list equal to one met before is that one
//     (share.EqualSubtrees): managedFields' fieldsV1 trees, labels, and the
//     containers' env, ports, probes, resources and volume mounts of the
//     Pods of a ReplicaSet;
//   - each object's content and metadata maps are made anew, metadata
//     first and labels first in them (share.RemakeForReads), so that a
//     List with a label selector over the dynamic client's objects costs
//     about what it costs over typed.UnstructuredFor's.
//
// The interning writes into none of an object's maps and lists
// (share.Interner.Borrowed): a transform may have set one map in many
// objects, and a ListerWatcher may hand out one object twice.
//
// The objects are equal to the dynamic client's. Shared maps and lists are
// seen by a caller who writes into a cached object in place, which
// client-go forbids: the write changes every cached object that shares
// the value, and, through the Interner's table, objects cached later
// with the value's former content. client-go's own dynamicinformer and
// dynamiclister tests pass with them (hack/dropin-test.sh), and a
// transform gets each object before any sharing. Code that may write
// into cached objects makes its factory with
// NewGenericInformerFactoryWithoutSharing (unstructured.WithoutSharing),
// which shares nothing.
func dropInSharing[T Object]() func(obj any) {
	if _, ok := any(*new(T)).(*unstructured.Unstructured); !ok {
		return nil
	}
	interner := share.NewInterner(share.EqualSubtrees)
	return func(obj any) {
		if u, ok := obj.(*unstructured.Unstructured); ok && u != nil {
			u.Object = interner.Borrowed(u.Object, share.RemakeForReads)
		}
	}
}
