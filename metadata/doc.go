// Package metadata is the metadata-only instantiation of the generic core:
// informers and listers of *metav1.PartialObjectMetadata (type and object
// metadata, no spec or status), keyed by GroupVersionResource and fed by
// client-go's metadata client (k8s.io/client-go/metadata), which asks the
// server for protobuf where it is served. It is the smallest cache of a
// resource: use it where a controller reads names, labels, annotations,
// owner references or finalizers only.
//
// It is a drop-in replacement for client-go's metadata/metadatainformer and
// metadata/metadatalister: it exports every name of both packages with the
// same signature and behaviour, WatchList semantics included. Migrating is
// changing the import paths, keeping the package names:
//
//	import (
//		metadatainformer "github.com/generic-informers/generic/metadata"
//		metadatalister "github.com/generic-informers/generic/metadata"
//	)
//
// The shortest use, client being a metadata.Interface (metadata.NewForConfig):
//
//	factory := metadatainformer.NewSharedInformerFactory(client, 0)
//	defer factory.Shutdown()
//	pods := factory.ForResource(schema.GroupVersionResource{Version: "v1", Resource: "pods"})
//	factory.Start(ctx.Done())
//	factory.WaitForCacheSync(ctx.Done())
//	obj, err := pods.Lister().ByNamespace("default").Get("web-0") // a *metav1.PartialObjectMetadata
//
// Under the names, the factories are generic.GenericInformerFactory values
// over a generic.Factory of *metav1.PartialObjectMetadata. Code that wants
// the typed API (typed event handlers with tombstones unwrapped, typed
// indexers, ByIndex, no type assertions, one Handle per hold) asks the one
// factory for the informer instead: typed.MetadataFor.
//
// Objects read from an informer's cache are shared and read-only: DeepCopy
// one before changing it.
package metadata
