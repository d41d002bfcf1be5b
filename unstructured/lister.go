package unstructured

import (
	"errors"

	apiunstructured "k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	"github.com/generic-informers/generic"
)

// Lister helps list resources: client-go's dynamiclister.Lister. Objects
// returned are shared cache state: read-only.
type Lister interface {
	// List lists all resources in the indexer.
	List(selector labels.Selector) (ret []*apiunstructured.Unstructured, err error)
	// Get retrieves a resource from the indexer with the given name
	Get(name string) (*apiunstructured.Unstructured, error)
	// Namespace returns an object that can list and get resources in a given namespace.
	Namespace(namespace string) NamespaceLister
}

// NamespaceLister helps list and get resources in one namespace: client-go's
// dynamiclister.NamespaceLister, exactly its methods, so that a
// NamespaceLister written for client-go (a test double, say) is one. Every
// generic.NamespaceLister[*unstructured.Unstructured] is one too, and so is
// every NamespaceLister this package returns (it also has ByIndex).
type NamespaceLister interface {
	// List lists all resources in the indexer for a given namespace.
	List(selector labels.Selector) (ret []*apiunstructured.Unstructured, err error)
	// Get retrieves a resource from the indexer for a given namespace and name.
	Get(name string) (*apiunstructured.Unstructured, error)
}

// Every generic NamespaceLister is one of this package's. (lister_test.go
// checks that this package's are client-go's dynamiclister's.)
var _ NamespaceLister = generic.NamespaceLister[*apiunstructured.Unstructured](nil)

// New returns a new Lister over indexer, as dynamiclister.New does. The
// Lister it returns also has ByIndex, as a
// generic.Lister[*unstructured.Unstructured] has, and its Namespace
// returns a generic.NamespaceLister[*unstructured.Unstructured], which has
// ByIndex.
func New(indexer cache.Indexer, gvr schema.GroupVersionResource) Lister {
	return lister{generic.NewLister[*apiunstructured.Unstructured](indexer, gvr.GroupResource())}
}

// lister is a generic.Lister as this package's Lister: Namespace returns
// the generic NamespaceLister as this package's NamespaceLister.
type lister struct {
	generic.Lister[*apiunstructured.Unstructured]
}

func (l lister) Namespace(namespace string) NamespaceLister { return l.Lister.Namespace(namespace) }

// NewRuntimeObjectShim returns a new shim for Lister. It wraps Lister so that
// it implements the cache.GenericLister interface, as
// dynamiclister.NewRuntimeObjectShim does.
func NewRuntimeObjectShim(lister Lister) cache.GenericLister {
	return generic.NewGenericLister(genericLister(lister))
}

// genericLister is l as a generic.Lister: the one New wrapped, or l
// completed by withoutIndex.
func genericLister(l Lister) generic.Lister[*apiunstructured.Unstructured] {
	if ours, ok := l.(lister); ok {
		return ours.Lister
	}
	return withoutIndex{l}
}

// withoutIndex completes a Lister written elsewhere (a test double, say)
// into a generic.Lister for the shim, which never calls ByIndex.
type withoutIndex struct{ Lister }

var errNoIndex = errors.New("unstructured: this Lister has no ByIndex")

func (withoutIndex) ByIndex(string, string) ([]*apiunstructured.Unstructured, error) {
	return nil, errNoIndex
}

func (l withoutIndex) Namespace(namespace string) generic.NamespaceLister[*apiunstructured.Unstructured] {
	return namespaceWithoutIndex{l.Lister.Namespace(namespace)}
}

// namespaceWithoutIndex completes a NamespaceLister written elsewhere into a
// generic.NamespaceLister for the shim, which never calls ByIndex.
type namespaceWithoutIndex struct{ NamespaceLister }

func (namespaceWithoutIndex) ByIndex(string, string) ([]*apiunstructured.Unstructured, error) {
	return nil, errNoIndex
}
