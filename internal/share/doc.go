// Package share makes decoded objects share what repeats across them.
//
// Sharer does it for typed objects: strings, managedFields fieldsV1
// bytes, maps of strings or of resource quantities, and slices and
// pointed-to structs of flat values (flat.go) that are equal. It walks an
// object once, by a plan made per Go type with reflect and then run
// without it, and replaces each value met for the second time (or later)
// with the copy kept from before. It also remakes each slice that has
// spare capacity at its length, but a list's items.
//
// Interner does it for unstructured objects: map keys and short strings,
// equal fieldsV1 trees and equal labels maps; and it remakes an object's
// maps at their size, in the order reads want (Remake).
//
// Objects come out equal (cmp.Diff, reflect.DeepEqual) to what they were;
// only their memory is shared. Shared strings and trimmed slices are
// invisible. Shared maps, slices, pointed-to structs and fieldsV1 bytes or
// trees are visible to a caller who writes into a cached
// object, which client-go forbids (objects from a cache are read-only):
// Sharer's maps argument and Interner's shareTrees turn that part off.
//
// The package is a leaf: it imports neither the module's root nor its
// other internal packages.
package share
