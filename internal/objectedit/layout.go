package objectedit

import (
	"unique"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// LayOutForReads remakes u's content, metadata and metadata.labels maps
// for a List with a label selector, which reads those three levels of
// every object (listing.Unstructured), as typed.UnstructuredFor's decoders
// make them:
//
//   - metadata first in its content and labels first in its metadata,
//     each map made for its entries, the three allocated one after the
//     other, where client-go's JSON decoder grows them in the order of the
//     document, with the whole spec between an object's metadata and its
//     labels;
//   - the keys "metadata" and "labels" are this package's constants, and
//     the labels' keys and values are shared across objects (Go's unique
//     package), where the JSON decoder allocates every key of every
//     object: a lookup compares the key it finds with the one it looks
//     for, and equal strings at one address compare without reading their
//     bytes, a cache miss fewer each.
//
// The entries are the same (cmp.Diff and reflect.DeepEqual see no
// difference); only where they are changes. An object with no metadata map
// is left as it is.
func LayOutForReads(u *unstructured.Unstructured) {
	if u == nil {
		return
	}
	metadata, ok := u.Object["metadata"].(map[string]any)
	if !ok {
		return
	}
	labels, hasLabels := metadata[labelsKey]
	ownMetadata := remake(metadata, labelsKey, sharedLabels(labels), hasLabels)
	u.Object = remake(u.Object, metadataKey, ownMetadata, true)
}

const (
	metadataKey = "metadata"
	labelsKey   = "labels"
)

// sharedLabels returns labels, if a map, remade with its string keys and
// values shared (unique.Make); anything else as it is.
func sharedLabels(labels any) any {
	m, ok := labels.(map[string]any)
	if !ok {
		return labels
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		if s, ok := v.(string); ok {
			v = unique.Make(s).Value()
		}
		out[unique.Make(k).Value()] = v
	}
	return out
}
