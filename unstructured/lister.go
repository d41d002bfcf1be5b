package unstructured

import (
	"errors"

	apiunstructured "k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	"github.com/generic-informers/generic"
)

// Lister helps list resources: client-go's dynamiclister.Lister. Every
// generic.Lister[*unstructured.Unstructured] is one. Objects returned are
// shared cache state: read-only.
type Lister interface {
	// List lists all resources in the indexer.
	List(selector labels.Selector) (ret []*apiunstructured.Unstructured, err error)
	// Get retrieves a resource from the indexer with the given name
	Get(name string) (*apiunstructured.Unstructured, error)
	// Namespace returns an object that can list and get resources in a given namespace.
	Namespace(namespace string) NamespaceLister
}

// NamespaceLister helps list and get resources in one namespace:
// client-go's dynamiclister.NamespaceLister, and the generic core's
// NamespaceLister of *unstructured.Unstructured.
type NamespaceLister = generic.NamespaceLister[*apiunstructured.Unstructured]

// New returns a new Lister over indexer, as dynamiclister.New does. The
// Lister it returns is a generic.Lister[*unstructured.Unstructured], which
// also has ByIndex.
func New(indexer cache.Indexer, gvr schema.GroupVersionResource) Lister {
	return generic.NewLister[*apiunstructured.Unstructured](indexer, gvr.GroupResource())
}

// NewRuntimeObjectShim returns a new shim for Lister. It wraps Lister so that
// it implements the cache.GenericLister interface, as
// dynamiclister.NewRuntimeObjectShim does.
func NewRuntimeObjectShim(lister Lister) cache.GenericLister {
	if full, ok := lister.(generic.Lister[*apiunstructured.Unstructured]); ok {
		return generic.NewGenericLister(full)
	}
	return generic.NewGenericLister[*apiunstructured.Unstructured](withoutIndex{lister})
}

// withoutIndex completes a Lister written elsewhere (a test double, say)
// into a generic.Lister for the shim, which never calls ByIndex.
type withoutIndex struct{ Lister }

var errNoIndex = errors.New("unstructured: this Lister has no ByIndex")

func (withoutIndex) ByIndex(string, string) ([]*apiunstructured.Unstructured, error) {
	return nil, errNoIndex
}
