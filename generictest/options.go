package generictest

import (
	"time"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/generic-informers/generic"
)

// Option configures a Fake.
type Option func(*settings)

type settings struct {
	objects []runtime.Object
	files   []string
	factory []generic.FactoryOption
	timeout time.Duration
}

// DefaultTimeout bounds each wait of a Fake made without Timeout.
const DefaultTimeout = 30 * time.Second

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

// FactoryOptions are passed to the Fake's factory (generic.WithNamespace,
// generic.WithLabelSelector, generic.WithShard, generic.WithIndexers...);
// NewInformer and NewUnstructuredInformer take an informer's own. The Fake
// learns what each informer selects from its requests, and waits for its
// handlers only for the changes it sees. Do not set an ErrorHandler: the
// Fake records errors (Fake.Errors).
func FactoryOptions(opts ...generic.FactoryOption) Option {
	return func(s *settings) { s.factory = append(s.factory, opts...) }
}

// Timeout bounds each wait of the Fake: a change waiting for its handlers,
// WaitFor and WaitForState, an informer's sync and first watch, a new
// handler's replay of the cache, the shutdown at the end of the test. A
// wait not over by then fails the test, saying what it waited for and what
// it saw, so that a controller that never converges fails in seconds and
// not at the test binary's deadline, with no clue. Each wait also ends a
// few seconds before the test's deadline (go test -timeout), if sooner.
// Default: DefaultTimeout; d <= 0 keeps the default.
func Timeout(d time.Duration) Option {
	return func(s *settings) {
		if d > 0 {
			s.timeout = d
		}
	}
}
