package metadata

import (
	"errors"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	"github.com/generic-informers/generic"
)

// Lister helps list resources: client-go's metadatalister.Lister. Every
// generic.Lister[*metav1.PartialObjectMetadata] is one. Objects returned are
// shared cache state: read-only. The Listers of this package are safe for
// concurrent use.
type Lister interface {
	// List lists all resources in the indexer.
	List(selector labels.Selector) (ret []*metav1.PartialObjectMetadata, err error)
	// Get retrieves a resource from the indexer with the given name
	Get(name string) (*metav1.PartialObjectMetadata, error)
	// Namespace returns an object that can list and get resources in a given namespace.
	Namespace(namespace string) NamespaceLister
}

// NamespaceLister helps list and get resources in one namespace:
// client-go's metadatalister.NamespaceLister, and the generic core's
// NamespaceLister of *metav1.PartialObjectMetadata.
type NamespaceLister = generic.NamespaceLister[*metav1.PartialObjectMetadata]

// New returns a new Lister over indexer, as metadatalister.New does: Get of
// a missing object returns an error that satisfies apierrors.IsNotFound and
// names gvr's GroupResource. The Lister it returns is a
// generic.Lister[*metav1.PartialObjectMetadata], which also has ByIndex, and
// which returns an error where client-go's would panic (a nil indexer, a
// value of another type in it; see generic.NewLister).
func New(indexer cache.Indexer, gvr schema.GroupVersionResource) Lister {
	return generic.NewLister[*metav1.PartialObjectMetadata](indexer, gvr.GroupResource())
}

// NewRuntimeObjectShim returns a new shim for Lister. It wraps Lister so that
// it implements the cache.GenericLister interface, as
// metadatalister.NewRuntimeObjectShim does.
func NewRuntimeObjectShim(lister Lister) cache.GenericLister {
	if full, ok := lister.(generic.Lister[*metav1.PartialObjectMetadata]); ok {
		return generic.NewGenericLister(full)
	}
	return generic.NewGenericLister[*metav1.PartialObjectMetadata](withoutIndex{lister})
}

// withoutIndex completes a Lister written elsewhere (a test double, say)
// into a generic.Lister for the shim, which never calls ByIndex.
type withoutIndex struct{ Lister }

var errNoIndex = errors.New("metadata: this Lister has no ByIndex")

func (withoutIndex) ByIndex(string, string) ([]*metav1.PartialObjectMetadata, error) {
	return nil, errNoIndex
}
