package indexguard

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// partialError is the Partial hook's error in these tests.
type partialError struct {
	index string
	keys  []string
}

func (e *partialError) Error() string { return fmt.Sprintf("%s partial: %v", e.index, e.keys) }

func newGuard(reported *[]string) *Guard {
	var mu sync.Mutex
	return New(Hooks{
		Report: func(err error) {
			mu.Lock()
			defer mu.Unlock()
			if reported != nil {
				*reported = append(*reported, err.Error())
			}
		},
		IndexError: func(index, key string, err error) error { return fmt.Errorf("%s of %q: %w", index, key, err) },
		Partial:    func(index string, keys []string) error { return &partialError{index, keys} },
	})
}

// object is a ConfigMap-like object whose "color" label is indexed; the
// index function fails on objects without one.
func object(name, color string) *metav1.ObjectMeta {
	o := &metav1.ObjectMeta{Namespace: "ns", Name: name}
	if color != "" {
		o.Labels = map[string]string{"color": color}
	}
	return o
}

func byColor(obj any) ([]string, error) {
	color, ok := obj.(*metav1.ObjectMeta).Labels["color"]
	if !ok {
		return nil, errors.New("no color")
	}
	return []string{color}, nil
}

// answer is what ByIndex answered: the names found, and the keys of the
// partial error (nil for none).
type answer struct {
	Names   []string
	Partial []string
}

func byIndex(t *testing.T, view cache.Indexer, value string) answer {
	t.Helper()
	objs, err := view.ByIndex("color", value)
	var a answer
	for _, obj := range objs {
		a.Names = append(a.Names, obj.(*metav1.ObjectMeta).Name)
	}
	var partial *partialError
	switch {
	case errors.As(err, &partial):
		a.Partial = partial.keys
	case err != nil:
		t.Fatal(err)
	}
	return a
}

// TestFailingKeysFollowTheStore: the keys an index function fails on are
// kept by client-go's store, under its lock: set when it fails, cleared when
// it succeeds on a later state of the object, when the object is deleted,
// and by a Replace that no longer holds them.
func TestFailingKeysFollowTheStore(t *testing.T) {
	tests := []struct {
		name string
		ops  func(store cache.Indexer) error
		want answer // what ByIndex answers for red
	}{
		{
			name: "a failure is kept",
			ops:  func(s cache.Indexer) error { return errors.Join(s.Add(object("a", "red")), s.Add(object("b", ""))) },
			want: answer{Names: []string{"a"}, Partial: []string{"ns/b"}},
		},
		{
			name: "an update the function indexes clears it",
			ops: func(s cache.Indexer) error {
				return errors.Join(s.Add(object("a", "red")), s.Add(object("b", "")), s.Update(object("b", "blue")))
			},
			want: answer{Names: []string{"a"}},
		},
		{
			name: "an update it fails on sets it",
			ops: func(s cache.Indexer) error {
				return errors.Join(s.Add(object("a", "red")), s.Add(object("b", "red")), s.Update(object("b", "")))
			},
			want: answer{Names: []string{"a"}, Partial: []string{"ns/b"}},
		},
		{
			name: "a delete clears it",
			ops: func(s cache.Indexer) error {
				return errors.Join(s.Add(object("a", "red")), s.Add(object("b", "")), s.Delete(object("b", "")))
			},
			want: answer{Names: []string{"a"}},
		},
		{
			name: "a Replace keeps what still fails",
			ops: func(s cache.Indexer) error {
				return errors.Join(s.Add(object("b", "")), s.Add(object("c", "")),
					s.Replace([]any{object("a", "red"), object("c", "")}, "2"))
			},
			want: answer{Names: []string{"a"}, Partial: []string{"ns/c"}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var reported []string
			g := newGuard(&reported)
			view := g.View(cache.NewIndexer(cache.DeletionHandlingMetaNamespaceKeyFunc, g.Indexers(cache.Indexers{"color": byColor})))
			if err := tc.ops(view); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, byIndex(t, view, "red")); diff != "" {
				t.Errorf("ByIndex (-want +got):\n%s", diff)
			}
			if len(reported) == 0 {
				t.Error("no failure reported")
			}
			if values := view.ListIndexFuncValues("color"); slices.Contains(values, unindexed) {
				t.Errorf("ListIndexFuncValues = %q, with the guard's own value", values)
			}
			if got := byIndex(t, view, unindexed); len(got.Names) != 0 {
				t.Errorf("ByIndex of the guard's own value returned %v, want nothing", got.Names)
			}
		})
	}
}

// TestNilIndexFunction: a nil function is reported and left out.
func TestNilIndexFunction(t *testing.T) {
	var reported []string
	g := newGuard(&reported)
	if diff := cmp.Diff(cache.Indexers{}, g.Indexers(cache.Indexers{"broken": nil})); diff != "" {
		t.Errorf("guarded (-want +got):\n%s", diff)
	}
	if len(reported) != 1 || !strings.Contains(reported[0], "nil index function") {
		t.Errorf("reported %q, want the nil function", reported)
	}
}

// TestConcurrentReadsAndWrites runs writes that make objects fail and
// succeed against reads, for the race detector; at the end, the objects
// left failing are named.
func TestConcurrentReadsAndWrites(t *testing.T) {
	g := newGuard(nil)
	view := g.View(cache.NewIndexer(cache.DeletionHandlingMetaNamespaceKeyFunc, g.Indexers(cache.Indexers{"color": byColor})))
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 200 {
				color := "red"
				if i%2 == 1 {
					color = ""
				}
				_ = view.Update(object(fmt.Sprintf("w%d", w), color))
				_, _ = view.ByIndex("color", "red")
				_ = view.ListIndexFuncValues("color")
			}
		})
	}
	wg.Go(func() {
		for range 200 {
			_ = view.AddIndexers(cache.Indexers{fmt.Sprintf("extra-%d", len(g.functions())): byColor})
		}
	})
	wg.Wait()
	want := answer{Partial: []string{"ns/w0", "ns/w1", "ns/w2", "ns/w3"}}
	if diff := cmp.Diff(want, byIndex(t, view, "red")); diff != "" {
		t.Errorf("ByIndex (-want +got):\n%s", diff)
	}
}
