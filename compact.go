package generic

import (
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/generic-informers/generic/internal/compact"
)

// WithCompactStore makes informers keep their objects serialized, for
// caches that are read far less than they are written (inventory, GitOps,
// audit): each object is kept as its protobuf encoding, compressed with S2
// (github.com/klauspost/compress) against a dictionary made of the first
// object, beside the metadata the store reads without decoding (namespace,
// name, labels, resourceVersion, uid). Up to decodedObjects decoded objects
// are kept too, the least recently read dropped first (0: none).
//
// The Lister[T] and handler API is the same; what a read costs is not:
//
//   - Get of an object kept decoded: a look-up, as in the default store.
//   - Get of any other: one decompression and one protobuf decode of the
//     object (about as long as the decode alone, see docs/benchmarks.md),
//     and the object is then kept decoded.
//   - List, Namespace(ns).List and ByIndex: label selectors and indexes are
//     matched on the kept metadata and index values; each object returned
//     is read as Get reads it.
//   - Handlers get decoded objects: the new state of an event is kept
//     decoded as it arrives; the old state of an update is read as Get
//     reads it.
//   - Index functions are called with decoded objects; the namespace index
//     (cache.MetaNamespaceIndexFunc) reads the kept metadata.
//
// Two reads of one object may return two equal copies, not the same
// pointer; both are read-only, as every cached object is. An empty list or
// map may read back as nil (protobuf does not tell them apart): as it
// arrived while the object is kept decoded, nil once it is decoded anew;
// compare with cmpopts.EquateEmpty. Only types
// with a protobuf encoding can be kept so (k8s.io/api's types,
// metav1.PartialObjectMetadata): for another type (a CRD's Go type,
// *unstructured.Unstructured) the factory, Acquire or NewInformer that is
// given the option returns an error naming it. A negative decodedObjects
// is an error too.
//
// Like WithTransform, it applies to the informer an Acquire makes: a later
// Acquire of the same selection with another setting (or none) is refused
// (see Factory.Acquire).
func WithCompactStore(decodedObjects int) InformerOption {
	return informerOption(func(o *options) { o.compact = &compactStore{decodedObjects: decodedObjects} })
}

// compactStore is WithCompactStore's setting.
type compactStore struct{ decodedObjects int }

// compactCodecFor returns the Codec of an informer of T with options o; nil
// without WithCompactStore, and an error naming the option if T cannot be
// kept compact.
func compactCodecFor[T Object](o options) (*compact.Codec[T], error) {
	if o.compact == nil {
		return nil, nil
	}
	newT, err := newObjectFunc[T]()
	if err != nil && o.exampleType != nil {
		newT, err = exampleConstructor[T](o.exampleType)
	}
	if err == nil {
		var codec *compact.Codec[T]
		if codec, err = compact.NewCodec(newT, o.compact.decodedObjects); err == nil {
			return codec, nil
		}
	}
	return nil, fmt.Errorf("generic: WithCompactStore(%d): %w", o.compact.decodedObjects, err)
}

// WithExampleObject names the Go type of an informer's objects when its T
// is an interface type, such as typed.Object (typed.InformerForKind, whose
// objects are of the Go type the scheme registers for the kind): obj is
// any object of that type (a *corev1.ConfigMap), and WithCompactStore makes
// its objects of that type to decode into. A T that is a pointer to a
// struct needs none (its own type is the type), and one of another type is
// an error at Acquire. obj itself is not kept.
//
// Like WithTransform, it applies to the informer an Acquire makes: a later
// Acquire of the same selection with another type is refused.
func WithExampleObject(obj runtime.Object) InformerOption {
	typ := reflect.TypeOf(obj)
	return informerOption(func(o *options) { o.exampleType, o.exampleGiven = typ, true })
}

// exampleConstructor returns a function that allocates a new, empty object
// of typ (a pointer to a struct, see WithExampleObject) as a T.
func exampleConstructor[T runtime.Object](typ reflect.Type) (func() T, error) {
	if !typ.Implements(reflect.TypeFor[T]()) {
		return nil, fmt.Errorf("%w: WithExampleObject's %v is not a %v", ErrUnexpectedType, typ, reflect.TypeFor[T]())
	}
	elem := typ.Elem()
	return func() T {
		// typ implements T: this assertion cannot fail.
		return reflect.New(elem).Interface().(T)
	}, nil
}
