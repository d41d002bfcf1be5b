package objectedit

import (
	"maps"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/generic-informers/generic/internal/heaptest"
)

// TestSet sets a key, held or new, of maps of seven to nine entries and
// checks the entries, that the map given is left as it was when Set
// returns another (exactly when it is full and holds the key), and the
// live heap the maps hold against maps made
// anew with the same entries: within a few bytes a map. Set in place, a
// full small map turned into a table, about 330 bytes more.
func TestSet(t *testing.T) {
	tests := []struct {
		name    string
		entries int
		key     string
	}{
		{"seven, a key held", 7, "k0"},
		{"eight, a key held", 8, "k0"},
		{"eight, the last key held", 8, "k7"},
		{"seven, a new key", 7, "new"},
		{"eight, a new key", 8, "new"},
		{"nine, a key held", 9, "k0"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			made := func(i int) map[string]any { return grown(tc.entries, i) }
			want := func(i int) map[string]any {
				m := made(i)
				m[tc.key] = "set"
				return maps.Collect(maps.All(m))
			}
			given := made(0)
			full := len(given) == Entries
			got, remade := Set(given, tc.key, "set")
			if diff := cmp.Diff(want(0), got); diff != "" {
				t.Errorf("entries (-want +got):\n%s", diff)
			}
			_, held := made(0)[tc.key]
			if wantRemade := full && held; remade != wantRemade {
				t.Errorf("remade %v, want %v", remade, wantRemade)
			}
			if remade {
				if diff := cmp.Diff(made(0), given); diff != "" {
					t.Errorf("the full map given changed (-want +got):\n%s", diff)
				}
			}

			checkHeapAsMadeAnew(t, "set by Set", want, func(i int) map[string]any {
				m, _ := Set(made(i), tc.key, "set")
				return m
			})
		})
	}
}

// TestRemake remakes maps, with their first key held or not, and checks
// the entries, and the live heap against maps made anew with them: a map
// of nine entries less one keeps its table, its remake is small.
func TestRemake(t *testing.T) {
	tests := []struct {
		name    string
		entries int
		deleted bool // one entry deleted before the remake
		first   string
	}{
		{"eight, first held", 8, false, "k3"},
		{"eight, first not held", 8, false, "none"},
		{"nine less one, first held", 9, true, "k7"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			made := func(i int) map[string]any {
				m := grown(tc.entries, i)
				if tc.deleted {
					delete(m, "k0")
				}
				return m
			}
			if diff := cmp.Diff(made(0), Remake(made(0), tc.first)); diff != "" {
				t.Errorf("entries (-want +got):\n%s", diff)
			}
			checkHeapAsMadeAnew(t, "remade", made, func(i int) map[string]any {
				return Remake(made(i), tc.first)
			})
		})
	}
}

// checkHeapAsMadeAnew checks that maps made by got (the i-th of count)
// hold no more live heap, within a few bytes a map, than maps made anew
// at their size with the entries of want(i).
func checkHeapAsMadeAnew(t *testing.T, how string, want, got func(i int) map[string]any) {
	t.Helper()
	const count = 2000
	// slack is what two measures of a live heap differ by with nothing
	// changed, and more: a few KiB, a byte or two a map.
	const slack = 16
	fresh := heaptest.Of(func() any {
		all := make([]map[string]any, count)
		for i := range all {
			w := want(i)
			all[i] = make(map[string]any, len(w))
			maps.Copy(all[i], w)
		}
		return all
	}) / count
	measured := heaptest.Of(func() any {
		all := make([]map[string]any, count)
		for i := range all {
			all[i] = got(i)
		}
		return all
	}) / count
	t.Logf("%d B a map made anew, %d B %s", fresh, measured, how)
	if measured > fresh+slack {
		t.Errorf("maps %s hold %d B each, %d B more than made anew", how, measured, measured-fresh)
	}
}

// grown is a map grown entry by entry, as a decoder grows one, to n
// entries, keys k0 to k<n-1>, each value "v<i>" (i tells maps apart).
func grown(n, i int) map[string]any {
	m := make(map[string]any)
	for e := range n {
		m["k"+strconv.Itoa(e)] = "v" + strconv.Itoa(i)
	}
	return m
}
