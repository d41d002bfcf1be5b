package share

import (
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestTreeKeys: equal trees are written alike, whatever the order their
// maps were filled in; trees that differ in any part, even where their
// parts written one after the other would be alike, are written
// differently; a tree with a value that is neither a map nor a string has
// no key.
func TestTreeKeys(t *testing.T) {
	leaf := func() map[string]any { return map[string]any{} }
	tests := []struct {
		name   string
		a, b   map[string]any
		wantOK bool
		same   bool
	}{
		{name: "equal fieldsV1 trees", wantOK: true, same: true,
			a: map[string]any{"f:metadata": map[string]any{"f:labels": map[string]any{".": leaf(), "f:app": leaf()}}, "f:data": map[string]any{"f:payload": leaf()}},
			b: map[string]any{"f:data": map[string]any{"f:payload": leaf()}, "f:metadata": map[string]any{"f:labels": map[string]any{"f:app": leaf(), ".": leaf()}}}},
		{name: "equal labels", wantOK: true, same: true,
			a: map[string]any{"app": "web", "tier": "front"}, b: map[string]any{"tier": "front", "app": "web"}},
		{name: "nested against side by side", wantOK: true,
			a: map[string]any{"a": map[string]any{"b": leaf()}}, b: map[string]any{"a": leaf(), "b": leaf()}},
		{name: "a key's bytes split otherwise", wantOK: true,
			a: map[string]any{"ab": "c"}, b: map[string]any{"a": "bc"}},
		{name: "a string against a map", wantOK: true,
			a: map[string]any{"a": ""}, b: map[string]any{"a": leaf()}},
		{name: "an empty key", wantOK: true,
			a: map[string]any{"": leaf()}, b: leaf()},
		{name: "a long key (its length a multi-byte uvarint)", wantOK: true,
			a: map[string]any{string(make([]byte, 300)): leaf()}, b: map[string]any{string(make([]byte, 301)): leaf()}},
		{name: "a number has no key",
			a: map[string]any{"app": int64(1)}, b: map[string]any{"app": int64(1)}},
		{name: "a nil map has no key (it would be written as an empty one)",
			a: map[string]any{"f:x": map[string]any(nil)}, b: map[string]any(nil)},
		{name: "a null has no key",
			a: map[string]any{"f:x": map[string]any{"f:y": nil}}, b: map[string]any{"f:x": map[string]any{"f:y": nil}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var keys treeKeys
			a, okA := keys.of(tc.a)
			a = append([]byte(nil), a...) // valid until the next call
			b, okB := keys.of(tc.b)
			type got struct{ OKA, OKB, Same bool }
			want := got{OKA: tc.wantOK, OKB: tc.wantOK, Same: tc.same}
			if diff := cmp.Diff(want, got{okA, okB, tc.wantOK && string(a) == string(b)}); diff != "" {
				t.Errorf("keys of %v and %v (-want +got):\n%s", tc.a, tc.b, diff)
			}
			if len(keys.keys) != 0 {
				t.Errorf("%d keys left in the scratch list, want none", len(keys.keys))
			}
		})
	}
}

// TestSharedTreesAllocateNothing: finding a fieldsV1 tree or a labels map
// that is shared already allocates nothing (the point of treeKeys).
func TestSharedTreesAllocateNothing(t *testing.T) {
	in := NewInterner(EqualTrees)
	fields := map[string]any{"f:metadata": map[string]any{"f:labels": map[string]any{".": map[string]any{}, "f:app": map[string]any{}}}}
	labels := map[string]any{"app": "web", "tier": "front"}
	in.mu.Lock()
	defer in.mu.Unlock()
	w := walk{in: in}
	w.fieldSet(fields)
	w.labelSet(labels)
	got := map[string]float64{
		"fieldsV1": testing.AllocsPerRun(100, func() { w.fieldSet(fields) }),
		"labels":   testing.AllocsPerRun(100, func() { w.labelSet(labels) }),
	}
	if diff := cmp.Diff(map[string]float64{"fieldsV1": 0, "labels": 0}, got); diff != "" {
		t.Errorf("allocations per lookup (-want +got):\n%s", diff)
	}
}

// TestTreeKeysOfRandomTrees: over many random trees, drawn from few keys
// and values so that many are equal, two keys are alike exactly when
// their trees are equal (the same seed every run).
func TestTreeKeysOfRandomTrees(t *testing.T) {
	r := rand.New(rand.NewPCG(12, 1))
	// Parts that are the form's own bytes (tags, small lengths), and
	// prefixes of each other.
	parts := []string{"", "\x00", "\x01", "\x02", "m", "s", "a", "as", "am", "s\x01a", "f:a", "f:ab", string(make([]byte, 130))}
	var tree func(depth int) map[string]any
	tree = func(depth int) map[string]any {
		m := map[string]any{}
		for range r.IntN(4) {
			key := parts[r.IntN(len(parts))]
			if depth > 0 && r.IntN(2) == 0 {
				m[key] = tree(depth - 1)
			} else {
				m[key] = parts[r.IntN(len(parts))]
			}
		}
		return m
	}
	var trees []map[string]any
	var keys []string
	var keysOf treeKeys
	for range 3000 {
		m := tree(2)
		key, ok := keysOf.of(m)
		if !ok {
			t.Fatalf("no key for %v", m)
		}
		trees, keys = append(trees, m), append(keys, string(key))
	}
	wrong := 0
	for i := range trees {
		for j := i + 1; j < len(trees) && wrong < 5; j++ {
			if equal, sameKey := reflect.DeepEqual(trees[i], trees[j]), keys[i] == keys[j]; equal != sameKey {
				wrong++
				t.Errorf("trees %v and %v: equal %v, keys alike %v", trees[i], trees[j], equal, sameKey)
			}
		}
	}
	if len(keysOf.keys) != 0 {
		t.Errorf("%d keys left in the scratch list, want none", len(keysOf.keys))
	}
}
