package generic_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/generic-informers/generic"
)

// goneAfterScript is a scriptedListerWatcher whose resource is no longer
// served once its lists are played: every later list is 404 Not Found, as
// when a CRD is deleted.
type goneAfterScript struct{ *scriptedListerWatcher }

func (lw goneAfterScript) List(options metav1.ListOptions) (runtime.Object, error) {
	list, err := lw.scriptedListerWatcher.List(options)
	if errors.Is(err, errScriptEnded) {
		return nil, apierrors.NewNotFound(configMapsGVR.GroupResource(), "")
	}
	return list, err
}

// TestObjectsCachedFollowsTheCache: the objects-cached gauge says what the
// informer's cache holds once the handlers have had the events, through
// watch events, objects that are rejected or deleted unseen, relists that
// drop objects, and a resource that is no longer served.
func TestObjectsCachedFollowsTheCache(t *testing.T) {
	tests := []struct {
		name string
		// lists are what the informer lists, the first at its start and
		// each other after the watch before it expires.
		lists []*unstructured.UnstructuredList
		// gone makes the lists after those 404 Not Found.
		gone bool
		// events are sent on the first watch; nil events expire it.
		events []watch.Event
		// lines are the handler's lines to wait for after the first sync.
		lines []string
		want  int
	}{{
		name:  "initial list",
		lists: []*unstructured.UnstructuredList{unstructuredList("10", namedConfigMap("a", "1"), namedConfigMap("b", "2"), namedConfigMap("c", "3"))},
		want:  3,
	}, {
		name:  "watch events, a rejected object and a delete of one never seen",
		lists: []*unstructured.UnstructuredList{unstructuredList("10", namedConfigMap("a", "1"))},
		events: []watch.Event{
			{Type: watch.Added, Object: namedConfigMap("b", "11")},
			{Type: watch.Added, Object: namedConfigMap("", "12")},
			{Type: watch.Deleted, Object: namedConfigMap("a", "13")},
			{Type: watch.Deleted, Object: namedConfigMap("x", "14")},
			{Type: watch.Added, Object: namedConfigMap("c", "15")},
		},
		lines: []string{"add default/b", "delete default/a", "delete default/x", "add default/c"},
		want:  2,
	}, {
		name: "a relist drops one",
		lists: []*unstructured.UnstructuredList{
			unstructuredList("10", namedConfigMap("a", "1"), namedConfigMap("b", "2")),
			unstructuredList("20", namedConfigMap("b", "2")),
		},
		events: []watch.Event{{}},
		lines:  []string{"delete tombstone default/a"},
		want:   1,
	}, {
		name:   "no longer served",
		lists:  []*unstructured.UnstructuredList{unstructuredList("10", namedConfigMap("a", "1"), namedConfigMap("b", "2"))},
		gone:   true,
		events: []watch.Event{{}},
		lines:  []string{"delete tombstone default/a", "delete tombstone default/b"},
		want:   0,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			lists := make([]runtime.Object, len(tc.lists))
			for i, list := range tc.lists {
				lists[i] = list
			}
			scripted := newScriptedListerWatcher(lists...)
			var lw cache.ListerWatcher = scripted
			if tc.gone {
				lw = goneAfterScript{scripted}
			}
			provider := &recordingProvider{}
			informer := newInformer[*unstructured.Unstructured](lw, configMapsGVR, nil,
				generic.WithMetricsProvider(provider), generic.WithErrorHandler(func(context.Context, error) {}))
			lines := make(chan string, 100)
			if _, err := informer.Informer().AddEventHandler(eventLog(lines)); err != nil {
				t.Fatal(err)
			}
			stop := runSynced(t, informer)
			defer stop()
			w := scripted.nextWatch(t)
			for _, event := range tc.events {
				if event.Object == nil {
					expire(w)
					continue
				}
				w.Action(event.Type, event.Object)
			}
			waitForLines(t, lines, tc.lines...)

			got := fmt.Sprintf("gauge %d, cache %d", provider.only(t).gauges.ObjectsCached(), len(informer.Informer().GetIndexer().ListKeys()))
			if diff := cmp.Diff(fmt.Sprintf("gauge %d, cache %d", tc.want, tc.want), got); diff != "" {
				t.Errorf("objects cached (-want +got):\n%s", diff)
			}
		})
	}
}

// TestObjectsCachedAllocatesNothing: a scrape reads the gauge of every
// informer; reading it must cost the same for a cache of any size, not
// list the cache's keys (one allocation of a slice of every key).
func TestObjectsCachedAllocatesNothing(t *testing.T) {
	const objects = 1000
	items := make([]*unstructured.Unstructured, objects)
	for i := range items {
		items[i] = namedConfigMap(fmt.Sprintf("cm-%d", i), "1")
	}
	provider := &recordingProvider{}
	informer := newInformer[*unstructured.Unstructured](newScriptedListerWatcher(unstructuredList("10", items...)), configMapsGVR, nil,
		generic.WithMetricsProvider(provider))
	stop := runSynced(t, informer)
	defer stop()
	objectsCached := provider.only(t).gauges.ObjectsCached
	got := fmt.Sprintf("%d objects, %.0f allocations a read", objectsCached(), testing.AllocsPerRun(100, func() { objectsCached() }))
	if diff := cmp.Diff(fmt.Sprintf("%d objects, 0 allocations a read", objects), got); diff != "" {
		t.Errorf("ObjectsCached (-want +got):\n%s", diff)
	}
}
