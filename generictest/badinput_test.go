package generictest_test

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/generic-informers/generic/generictest"
	"github.com/generic-informers/generic/internal/widget"
)

// fatalRecorder is a testing.TB whose Fatal and Fatalf record the message
// and end the goroutine, as the real ones do, without failing the test
// that uses it. Everything else goes to the real test.
type fatalRecorder struct {
	testing.TB
	fatal string
}

func (r *fatalRecorder) Fatal(args ...any) {
	r.fatal = fmt.Sprint(args...)
	runtime.Goexit()
}

func (r *fatalRecorder) Fatalf(format string, args ...any) {
	r.fatal = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// fatalOf runs use with a fatalRecorder in its own goroutine and returns
// the message it failed with ("" if it did not).
func fatalOf(t *testing.T, use func(testing.TB)) string {
	r := &fatalRecorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		use(r)
	}()
	<-done
	return r.fatal
}

// TestBadInputFailsTheTest: bad fixtures and resources fail the test with a
// message that says what is wrong, where client-go's fake client would
// panic; a CRD the kit cannot use is passed over.
func TestBadInputFailsTheTest(t *testing.T) {
	tests := []struct {
		name string
		use  func(testing.TB)
		// wantFatal is part of the message, or "" for none.
		wantFatal string
	}{{
		name:      "nil scheme",
		use:       func(tb testing.TB) { generictest.New(tb, nil) },
		wantFatal: "nil scheme",
	}, {
		name: "the same object twice",
		use: func(tb testing.TB) {
			generictest.New(tb, widget.NewScheme(), generictest.Files("../testdata/generictest/duplicate.yaml"))
		},
		wantFatal: "seeding ConfigMap team-a/twice",
	}, {
		name: "an apiVersion that names no GroupVersion",
		use: func(tb testing.TB) {
			generictest.New(tb, widget.NewScheme(), generictest.Files("../testdata/generictest/bad-apiversion.yaml"))
		},
		wantFatal: "example.com/v1/extra",
	}, {
		name: "a CRD whose versions are not objects",
		use: func(tb testing.TB) {
			generictest.New(tb, widget.NewScheme(), generictest.Files("../testdata/generictest/crd-bad-versions.yaml"))
		},
	}, {
		name: "an unstructured informer of a resource the Fake does not know",
		use: func(tb testing.TB) {
			fake := generictest.New(tb, k8sruntime.NewScheme())
			generictest.NewUnstructuredInformer(fake, schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "gadgets"})
		},
		wantFatal: "example.com/v1, Resource=gadgets is not a resource",
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := fatalOf(t, tc.use)
			if tc.wantFatal == "" && got != "" || !strings.Contains(got, tc.wantFatal) {
				t.Errorf("failed with %q, want a failure saying %q", got, tc.wantFatal)
			}
		})
	}
}
