package generictest

import (
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/generic-informers/generic"
)

// Option configures a Fake.
type Option func(*settings)

type settings struct {
	objects   []runtime.Object
	files     []string
	namespace string
	selector  labels.Selector
	factory   []generic.Option
}

// Objects seeds the Fake with objs: objects of Go types registered in the
// scheme, or *unstructured.Unstructured (custom resources).
func Objects(objs ...runtime.Object) Option {
	return func(s *settings) { s.objects = append(s.objects, objs...) }
}

// Files seeds the Fake with the objects of multi-document YAML (or JSON)
// files. Kinds the scheme does not know stay unstructured; a
// CustomResourceDefinition among them tells the Fake its resource's name
// and scope.
func Files(paths ...string) Option {
	return func(s *settings) { s.files = append(s.files, paths...) }
}

// Namespace limits the Fake's informers to one namespace, as
// generic.WithNamespace does; the Fake then knows which changes they see.
func Namespace(namespace string) Option {
	return func(s *settings) { s.namespace = namespace }
}

// LabelSelector limits the Fake's informers to the objects selector
// matches, as a TweakListOptionsFunc setting LabelSelector does.
func LabelSelector(selector labels.Selector) Option {
	return func(s *settings) { s.selector = selector }
}

// FactoryOptions are passed to the Fake's factories (for example
// generic.WithIndexers). Limit namespaces and labels with Namespace and
// LabelSelector instead, so that the Fake knows what its informers see; and
// do not set an ErrorHandler: the Fake records errors (Fake.Errors).
func FactoryOptions(opts ...generic.Option) Option {
	return func(s *settings) { s.factory = append(s.factory, opts...) }
}
