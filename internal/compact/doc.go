// Package compact keeps an informer's objects serialized: protobuf,
// compressed with S2 (github.com/klauspost/compress/s2, Snappy's format made
// faster), in a Record that also holds what the store and its namespace
// index read without decoding (namespace, name, labels, resourceVersion,
// uid). A Codec makes Records of objects and objects of Records, through a
// small bounded cache of decoded objects (k8s.io/utils/lru), and an Indexer
// shows a client-go store of Records as a store of objects.
//
// It is for caches read far less than they are written (inventory, GitOps,
// audit): a read that misses the decoded cache pays one decode.
//
// The package is a leaf: it imports neither the module's root nor its
// other internal packages.
package compact
