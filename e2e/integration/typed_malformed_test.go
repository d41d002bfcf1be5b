package integration

import (
	"context"
	"errors"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/labels"
	clientfeatures "k8s.io/client-go/features"
	clientfeaturestesting "k8s.io/client-go/features/testing"
	"k8s.io/client-go/rest"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/e2e/apiserver"
	"github.com/generic-informers/generic/internal/widget"
	"github.com/generic-informers/generic/typed"
)

// TestTypedRESTSkipsMalformed serves *widget.Widget through the typed
// factory's REST client, which decodes the server's JSON straight into the
// Go type. With the CRD's schema loosened, the API server stores Widgets
// whose spec.size is a string: one in the initial list, which must not keep
// the informer from syncing with the others, and one created while it
// watches, which must neither end the watch nor hold back the Widget
// created after it. Each bad Widget is reported with its key and skipped.
//
// It runs with a plain list then watch, and with client-go's WatchList
// (the initial state streamed through the watch), which reach the decoder
// by different paths: a list answer, and watch events.
func TestTypedRESTSkipsMalformed(t *testing.T) {
	server := apiserver.StartForTest(t) // the loosened CRD must not leak into other tests
	c := newCluster(t, server)
	apply(t, c, load(t, "loose", "crds/widgets.example.com-loose.yaml")...)

	tests := []struct {
		name      string
		prefix    string
		watchList bool
	}{
		{name: "list then watch", prefix: "loose-list", watchList: false},
		{name: "watch list", prefix: "loose-stream", watchList: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clientfeaturestesting.SetFeatureDuringTest(t, clientfeatures.WatchListClient, tc.watchList)
			p := tc.prefix
			apply(t, c, namespaces(p)...)
			apply(t, c, load(t, p, "widgets.yaml", "malformed/widget-wrong-type.yaml")...)

			config, requests := countWidgetRequests(server.Config)
			reports := &reportLog{}
			factory, err := typed.NewFactory(config, widget.NewScheme(), ownObjects(p), generic.WithErrorHandler(reports.record))
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
				{Verb: "ADDED", Key: p + "-a/large", State: "size=10"},
				{Verb: "ADDED", Key: p + "-a/small", State: "size=1"},
				{Verb: "ADDED", Key: p + "-b/small", State: "size=2"},
			}, rec.next(t, 3)); diff != "" {
				t.Errorf("events of the initial list (-want +got):\n%s", diff)
			}
			cached := func() []string {
				all, err := widgets.Lister().List(labels.Everything())
				if err != nil {
					t.Fatal(err)
				}
				return keys(all)
			}
			if diff := cmp.Diff([]string{p + "-a/large", p + "-a/small", p + "-b/small"}, cached()); diff != "" {
				t.Errorf("cached after sync (-want +got):\n%s", diff)
			}

			// While it watches: a malformed Widget, then a good one.
			synced := requests.watching(t)
			t.Logf("requests for Widgets by the sync: %v", synced)
			brokenLater := load(t, p, "malformed/widget-wrong-type.yaml")[0]
			brokenLater.SetName("broken-later")
			later := load(t, p, "widgets.yaml")[2] // team-b/small, size 2
			later.SetName("later")
			apply(t, c, brokenLater, later)
			if diff := cmp.Diff([]event{
				{Verb: "ADDED", Key: p + "-b/later", State: "size=2"},
			}, rec.next(t, 1)); diff != "" {
				t.Errorf("events after the malformed Widget (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(synced, requests.snapshot()); diff != "" {
				t.Errorf("list and watch requests since the sync (-want +got): the watch did not go on:\n%s", diff)
			}
			if diff := cmp.Diff([]string{p + "-a/large", p + "-a/small", p + "-b/later", p + "-b/small"}, cached()); diff != "" {
				t.Errorf("cached after the watch (-want +got):\n%s", diff)
			}

			wantReported := []string{p + "-a/broken", p + "-a/broken-later"}
			if diff := cmp.Diff(wantReported, reports.conversionKeys(t, len(wantReported))); diff != "" {
				t.Errorf("keys of the reported *generic.ConversionErrors (-want +got):\n%s", diff)
			}
			if other := reports.others(); len(other) > 0 {
				t.Logf("other errors reported: %q", other)
			}
		})
	}
}

// reportLog records what an informer's ErrorHandler is given.
type reportLog struct {
	mu   sync.Mutex
	errs []error
}

func (r *reportLog) record(_ context.Context, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, err)
}

// conversionKeys waits for n *generic.ConversionErrors (the ErrorHandler
// runs on the informer's callbacks goroutine, which may come to them after
// the handlers have had their events), until the test's context ends, then
// returns the keys of all reported so far, sorted.
func (r *reportLog) conversionKeys(t *testing.T, n int) []string {
	t.Helper()
	ctx := testContext(t)
	for {
		var got []string
		r.mu.Lock()
		for _, err := range r.errs {
			if conversion, ok := errors.AsType[*generic.ConversionError](err); ok {
				got = append(got, conversion.Key)
			}
		}
		r.mu.Unlock()
		if len(got) >= n || ctx.Err() != nil {
			slices.Sort(got)
			return got
		}
		select {
		case <-ctx.Done():
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// others returns the messages of the reported errors that are not
// *generic.ConversionErrors.
func (r *reportLog) others() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var other []string
	for _, err := range r.errs {
		if _, ok := errors.AsType[*generic.ConversionError](err); !ok {
			other = append(other, err.Error())
		}
	}
	return other
}

// widgetRequests counts the list and the watch requests for Widgets that a
// rest.Config makes: a watch ended by an object it cannot decode shows as a
// new watch or list.
type widgetRequests struct {
	mu     sync.Mutex
	counts map[string]int // "list" or "watch" -> requests
}

func countWidgetRequests(config *rest.Config) (*rest.Config, *widgetRequests) {
	rec := &widgetRequests{counts: map[string]int{}}
	config = rest.CopyConfig(config)
	config.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
			if req.Method == http.MethodGet && strings.HasSuffix(req.URL.Path, "/"+widget.GVR.Resource) {
				kind := "list"
				if req.URL.Query().Get("watch") == "true" {
					kind = "watch"
				}
				rec.mu.Lock()
				rec.counts[kind]++
				rec.mu.Unlock()
			}
			return rt.RoundTrip(req)
		})
	})
	return config, rec
}

// watching waits until a watch has been asked for, which the reflector
// does once the informer has synced from a list, and returns the counts.
func (r *widgetRequests) watching(t *testing.T) map[string]int {
	t.Helper()
	ctx := testContext(t)
	for {
		if counts := r.snapshot(); counts["watch"] > 0 {
			return counts
		}
		select {
		case <-ctx.Done():
			t.Fatalf("no watch of Widgets after the sync: %v", r.snapshot())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func (r *widgetRequests) snapshot() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return maps.Clone(r.counts)
}
