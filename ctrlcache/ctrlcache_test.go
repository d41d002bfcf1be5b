package ctrlcache

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// TestRefusedOptions: what the cache cannot honour is an error naming it,
// before any request.
func TestRefusedOptions(t *testing.T) {
	newInformer := func(toolscache.ListerWatcher, runtime.Object, time.Duration, toolscache.Indexers) toolscache.SharedIndexInformer {
		return nil
	}
	tests := []struct {
		name    string
		config  *rest.Config
		opts    crcache.Options
		options Options
		want    string
	}{
		{"nil config", nil, crcache.Options{}, Options{}, "ctrlcache: nil rest.Config"},
		{"NewInformer beside ctrlcache.Options", &rest.Config{Host: "https://127.0.0.1:1"}, crcache.Options{NewInformer: newInformer}, Options{NoSharing: true},
			errNewInformerWithOptions.Error()},
		{"NewInformer beside Metrics, which cannot measure the caller's informers", &rest.Config{Host: "https://127.0.0.1:1"}, crcache.Options{NewInformer: newInformer}, Options{Metrics: true},
			errNewInformerWithOptions.Error()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := BuilderWithOptions(tc.options)(tc.config, tc.opts)
			if err == nil {
				t.Fatal("New: nil error")
			}
			if diff := cmp.Diff(tc.want, err.Error()); diff != "" {
				t.Errorf("New's error (-want +got):\n%s", diff)
			}
		})
	}
}

// TestFieldIndexKeys: IndexField's keys are controller-runtime's, so that
// MatchingFields reads them as its cache does.
func TestFieldIndexKeys(t *testing.T) {
	extract := func(o client.Object) []string { return []string{o.GetLabels()["app"], "x"} }
	tests := []struct {
		name string
		obj  any
		want []string
	}{
		{"namespaced", &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", Labels: map[string]string{"app": "web"}}},
			[]string{"ns/web", "ns/x", "__all_namespaces/web", "__all_namespaces/x"}},
		{"cluster-scoped", &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", Labels: map[string]string{"app": "db"}}},
			[]string{"__all_namespaces/db", "__all_namespaces/x"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := fieldIndexFunc(extract)(tc.obj)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("keys (-want +got):\n%s", diff)
			}
		})
	}
	if _, err := fieldIndexFunc(extract)("not an object"); err == nil {
		t.Error("index of a string: nil error")
	}
}

func TestRequiresExactMatch(t *testing.T) {
	tests := []struct {
		selector string
		want     bool
	}{
		{"a=1", true},
		{"a==1,b=2", true},
		{"a!=1", false},
		{"a=1,b!=2", false},
		{"", false},
	}
	for _, tc := range tests {
		t.Run(tc.selector, func(t *testing.T) {
			sel, err := fields.ParseSelector(tc.selector)
			if err != nil {
				t.Fatal(err)
			}
			if got := requiresExactMatch(sel); got != tc.want {
				t.Errorf("requiresExactMatch(%q) = %v, want %v", tc.selector, got, tc.want)
			}
		})
	}
}

// TestWatchErrorHandlerGetsAReflector: client-go's own
// DefaultWatchErrorHandler, the one users pass most, reads its Reflector's
// fields; it must not get nil.
func TestWatchErrorHandlerGetsAReflector(t *testing.T) {
	var got []error
	record := func(_ context.Context, r *toolscache.Reflector, err error) {
		if r == nil {
			t.Error("handler got a nil Reflector")
		}
		got = append(got, err)
	}
	tests := []struct {
		name    string
		handler toolscache.WatchErrorHandlerWithContext
	}{
		{"client-go's default", toolscache.DefaultWatchErrorHandler},
		{"a user's", record},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := watchErrorHandler(tc.handler)
			for _, err := range []error{io.EOF, io.ErrUnexpectedEOF, errors.New("boom")} {
				h(context.Background(), err)
			}
		})
	}
	if diff := cmp.Diff([]string{"EOF", "unexpected EOF", "boom"}, errorStrings(got)); diff != "" {
		t.Errorf("errors handed on (-want +got):\n%s", diff)
	}
	if watchErrorHandler(nil) != nil {
		t.Error("watchErrorHandler(nil) is not nil")
	}
}

func errorStrings(errs []error) []string {
	out := make([]string, len(errs))
	for i, err := range errs {
		out[i] = err.Error()
	}
	return out
}

// TestUntypedHandlerTombstones: a delete whose final state is unknown
// reaches a client-go handler as client-go's own informers hand it on.
func TestUntypedHandlerTombstones(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p"}}
	tests := []struct {
		name    string
		deleted toolscache.DeletedObject[*corev1.Pod]
		want    any
	}{
		{"seen", toolscache.DeletedObject[*corev1.Pod]{OptionalObj: pod}, pod},
		{"final state unknown", toolscache.DeletedObject[*corev1.Pod]{OptionalObj: pod, FinalStateUnknown: &toolscache.DeletedFinalStateUnknown{Key: "ns/p", Obj: "raw"}},
			toolscache.DeletedFinalStateUnknown{Key: "ns/p", Obj: pod}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got any
			h := untypedHandler[*corev1.Pod]{handler: toolscache.ResourceEventHandlerFuncs{DeleteFunc: func(obj any) { got = obj }}}
			h.OnDelete(tc.deleted)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("OnDelete handed on (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRegistryOf: the Registry behind a cache made here, and none behind
// another cache.
func TestRegistryOf(t *testing.T) {
	opts := crcache.Options{Mapper: meta.NewDefaultRESTMapper(nil)}
	ours, err := New(&rest.Config{Host: "https://127.0.0.1:1"}, opts)
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := crcache.New(&rest.Config{Host: "https://127.0.0.1:1"}, opts)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		cache crcache.Cache
		want  bool
	}{
		{"ctrlcache.New's", ours, true},
		{"controller-runtime's", theirs, false},
		{"nil", nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			registry, ok := RegistryOf(tc.cache)
			if ok != tc.want || (registry != nil) != tc.want {
				t.Errorf("RegistryOf: (%v, %v), want a Registry: %v", registry, ok, tc.want)
			}
		})
	}
}
