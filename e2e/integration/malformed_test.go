package integration

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/e2e/apiserver"
	"github.com/generic-informers/generic/internal/widget"
	"github.com/generic-informers/generic/typed"
)

// TestTypedViewOfDynamicClientSkipsMalformed serves *widget.Widget from the
// dynamic client, converted at ingest. With the CRD's schema loosened, the API
// server stores a Widget whose spec.size is a string: the informer reports it
// with its key and skips it, and serves every other Widget.
func TestTypedViewOfDynamicClientSkipsMalformed(t *testing.T) {
	server := apiserver.StartForTest(t) // the loosened CRD must not leak into other tests
	c := newCluster(t, server)
	apply(t, c, namespaces("loose")...)
	apply(t, c, load(t, "loose", "crds/widgets.example.com-loose.yaml", "widgets.yaml", "malformed/widget-wrong-type.yaml")...)

	reported := make(chan error, 100)
	factory, err := typed.NewFactoryForClients(typed.Clients{Dynamic: c.Dynamic, RESTMapper: c.Mapper}, widget.NewScheme(),
		generic.WithErrorHandler(func(_ context.Context, err error) { reported <- err }))
	if err != nil {
		t.Fatal(err)
	}
	defer factory.Shutdown()
	widgets, err := typed.InformerFor[*widget.Widget](factory)
	if err != nil {
		t.Fatal(err)
	}
	rec := newRecorder(widgetState)
	if _, err := widgets.AddEventHandler(rec); err != nil {
		t.Fatal(err)
	}
	syncAll(t, factory.Start, factory.WaitForCacheSync)

	if diff := cmp.Diff([]event{
		{Verb: "ADDED", Key: "loose-a/large", State: "size=10"},
		{Verb: "ADDED", Key: "loose-a/small", State: "size=1"},
		{Verb: "ADDED", Key: "loose-b/small", State: "size=2"},
	}, rec.next(t, 3)); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	// The ErrorHandler runs on the informer's callback goroutine, which
	// may come to it after the handlers have had their events.
	var conversion *generic.ConversionError
	select {
	case err := <-reported:
		if !errors.As(err, &conversion) {
			t.Fatalf("reported %v, want a *ConversionError", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the malformed Widget was not reported")
	}
	if diff := cmp.Diff("loose-a/broken", conversion.Key); diff != "" {
		t.Errorf("reported key (-want +got):\n%s", diff)
	}
	all, err := widgets.Lister().List(labels.Everything())
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(keys(all), "loose-a/broken") {
		t.Error("the malformed Widget is in the cache")
	}
	if diff := cmp.Diff([]string{"loose-a/large", "loose-a/small", "loose-b/small"}, keys(all)); diff != "" {
		t.Errorf("cached (-want +got):\n%s", diff)
	}
}
