// Package objectedit holds the edits the library makes to an object after
// the ingest converted it and before anything else sees it: managedFields
// stripped (generic.WithStripManagedFields) and, before a user's
// transform, an *unstructured.Unstructured's labels given a map of its own;
// and what those edits, and typed's decoders, rely on of the layout of
// Go's maps, so that an edited object holds no more memory than one made
// as it ends up.
//
// It imports nothing of this module. Its edits are plain functions of an
// object; the ingest runs them through the transform hook the root package
// hands it (ForIngest).
package objectedit
