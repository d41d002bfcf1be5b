package share

import (
	"math/rand/v2"
	goruntime "runtime"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime"
	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// TestEqualSubtrees interns objects one after the other with
// EqualSubtrees, requires each equal to what it was, and checks which
// nodes (maps, lists) of two objects are one in memory, as the contract
// says: a node enters the table when met a second time, as it is then, and
// is shared from there on; a parent's key names its children by address,
// so a node of depth d (a leaf is 1) is shared from object d+1 on.
func TestEqualSubtrees(t *testing.T) {
	type check struct {
		pathA string
		objA  int
		pathB string
		objB  int
		one   bool
	}
	tests := []struct {
		name   string
		specs  []string
		checks []check
	}{
		{
			name:  "a leaf map, three times",
			specs: []string{`{"a":{"k":"v"}}`, `{"a":{"k":"v"}}`, `{"a":{"k":"v"}}`},
			checks: []check{
				{"a", 0, "a", 1, false}, // object 0's is a candidate only
				{"a", 1, "a", 2, true},
			},
		},
		{
			name:  "a list of maps, four times",
			specs: []string{`{"l":[{"k":"v"}]}`, `{"l":[{"k":"v"}]}`, `{"l":[{"k":"v"}]}`, `{"l":[{"k":"v"}]}`},
			checks: []check{
				{"l.0", 1, "l.0", 2, true}, {"l.0", 1, "l.0", 3, true},
				{"l", 1, "l", 2, false}, // object 1's list held object 1's map, then new
				{"l", 2, "l", 3, true},
			},
		},
		{
			name:  "maps that differ in a value, in turn",
			specs: []string{`{"a":{"k":"v1"}}`, `{"a":{"k":"v2"}}`, `{"a":{"k":"v1"}}`, `{"a":{"k":"v2"}}`, `{"a":{"k":"v1"}}`, `{"a":{"k":"v2"}}`},
			checks: []check{
				{"a", 2, "a", 4, true}, {"a", 3, "a", 5, true},
				{"a", 2, "a", 3, false}, {"a", 4, "a", 5, false},
			},
		},
		{
			name:  "an integer and a float",
			specs: []string{`{"a":{"n":1}}`, `{"a":{"n":1.0}}`, `{"a":{"n":1}}`, `{"a":{"n":1.0}}`, `{"a":{"n":1}}`, `{"a":{"n":1.0}}`},
			checks: []check{
				{"a", 2, "a", 4, true}, {"a", 3, "a", 5, true},
				{"a", 4, "a", 5, false},
			},
		},
		{
			name:  "empty maps and lists",
			specs: []string{`{"m":{},"l":[]}`, `{"m":{},"l":[]}`, `{"m":{},"l":[]}`},
			checks: []check{
				{"m", 1, "m", 2, true}, {"l", 1, "l", 2, true},
				{"l", 0, "l", 1, false},
			},
		},
		{
			name:  "one subtree under two parents",
			specs: []string{`{"x":{"a":{"k":"v"}},"y":{"b":{"k":"v"}}}`, `{"x":{"a":{"k":"v"}},"y":{"b":{"k":"v"}}}`},
			checks: []check{
				{"x.a", 1, "y.b", 1, true},
				{"x", 1, "y", 1, false},
			},
		},
		{
			name:  "a list and a map of the same values",
			specs: []string{`{"l":["a","b"],"m":{"0":"a","1":"b"}}`, `{"l":["a","b"],"m":{"0":"a","1":"b"}}`, `{"l":["a","b"],"m":{"0":"a","1":"b"}}`},
			checks: []check{
				{"l", 1, "l", 2, true}, {"m", 1, "m", 2, true},
				{"l", 2, "m", 2, false},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := NewInterner(EqualSubtrees)
			var objects []map[string]any
			for _, s := range tc.specs {
				content := specContent(t, s)
				want := runtime.DeepCopyJSON(content)
				out := in.Object(content, KeepMaps, nil)
				if diff := cmp.Diff(want, out); diff != "" {
					t.Fatalf("object changed (-want +got):\n%s", diff)
				}
				objects = append(objects, out)
			}
			var want, got []bool
			for _, c := range tc.checks {
				want = append(want, c.one)
				got = append(got, sameNode(nodeAt(objects[c.objA], c.pathA), nodeAt(objects[c.objB], c.pathB)))
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("one node, check by check (-want +got):\n%s", diff)
			}
		})
	}
}

// specContent is an object with spec, JSON, decoded as the dynamic client
// decodes (integers int64).
func specContent(t *testing.T, spec string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := utiljson.Unmarshal([]byte(spec), &m); err != nil {
		t.Fatal(err)
	}
	return map[string]any{"kind": "X", "spec": m}
}

// nodeAt returns the node at path under content's spec, dot-separated, a
// number indexing a list.
func nodeAt(content map[string]any, path string) any {
	var node any = content["spec"]
	for _, p := range strings.Split(path, ".") {
		switch n := node.(type) {
		case map[string]any:
			node = n[p]
		case []any:
			i, _ := strconv.Atoi(p)
			node = n[i]
		}
	}
	return node
}

// sameNode reports whether a and b are one value in memory: the data
// words of the two interfaces are one (a map's address; a list's box,
// which canonical hands out as the table holds it).
func sameNode(a, b any) bool {
	return a != nil && (*[2]unsafe.Pointer)(unsafe.Pointer(&a))[1] == (*[2]unsafe.Pointer)(unsafe.Pointer(&b))[1]
}

// TestEqualSubtreesRandomObjects interns many random objects, drawn from
// few keys and values so that many nodes are equal, through a table small
// enough to be emptied again and again, dropping all but the last objects
// and collecting garbage as it goes, so that the addresses in the table's
// keys are those of freed nodes too (see canonical): every object stays
// equal to what it was, whatever the sharing (the same seed every run).
func TestEqualSubtreesRandomObjects(t *testing.T) {
	r := rand.New(rand.NewPCG(27, 1))
	keys := []string{"a", "b", "c", "name", "value"}
	leaves := []any{"x", "y", int64(1), int64(2), 1.5, true, false, nil}
	var node func(depth int) any
	node = func(depth int) any {
		switch k := r.IntN(6); {
		case depth > 0 && k == 0:
			l := make([]any, r.IntN(3))
			for i := range l {
				l[i] = node(depth - 1)
			}
			return l
		case depth > 0 && k <= 2:
			m := map[string]any{}
			for range r.IntN(4) {
				m[keys[r.IntN(len(keys))]] = node(depth - 1)
			}
			return m
		}
		return leaves[r.IntN(len(leaves))]
	}
	in := NewInterner(EqualSubtrees)
	in.maxSubtrees = 16
	type kept struct{ want, got map[string]any }
	var last []kept
	for i := range 3000 {
		content := map[string]any{"kind": "X", "spec": node(4)}
		want := runtime.DeepCopyJSON(content)
		got := in.Object(content, Remake(i%3), nil)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("object %d (-want +got):\n%s", i, diff)
		}
		last = append(last, kept{want, got})
		if len(last) > 50 {
			last = last[1:]
		}
		if i%100 == 0 {
			goruntime.GC()
		}
	}
	for i, k := range last {
		if diff := cmp.Diff(k.want, k.got); diff != "" {
			t.Errorf("kept object %d changed later (-want +got):\n%s", i, diff)
		}
	}
}

// TestBorrowedWritesNothing interns, with Borrowed, objects that hold
// maps and lists in common (as a transform may set one map in every
// object): none of them is written to (its entries are the same boxes,
// its keys the same strings), the objects come out equal, and nodes that
// change are new.
func TestBorrowedWritesNothing(t *testing.T) {
	eight := map[string]any{}
	for i := range 8 {
		eight["k"+strconv.Itoa(i)] = "v"
	}
	common := map[string]any{"c": eight, "l": []any{"x", map[string]any{"y": "z"}}}
	type snapshot map[string][2]unsafe.Pointer
	snap := func(m map[string]any) snapshot {
		out := snapshot{}
		for k, v := range m {
			out[k] = [2]unsafe.Pointer{unsafe.Pointer(unsafe.StringData(k)), (*[2]unsafe.Pointer)(unsafe.Pointer(&v))[1]}
		}
		return out
	}
	before := map[string]snapshot{"common": snap(common), "eight": snap(eight)}
	in := NewInterner(EqualSubtrees)
	for i, remake := range []Remake{RemakeForReads, RemakeForReads, KeepMaps, RemakeAll} {
		content := specContent(t, `{"own":{"a":"b"}}`)
		content["common"] = common
		content["metadata"] = map[string]any{"name": "o" + strconv.Itoa(i), "labels": map[string]any{"app": "web"}}
		want := runtime.DeepCopyJSON(content)
		got := in.Borrowed(content, remake)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("object %d (-want +got):\n%s", i, diff)
		}
	}
	after := map[string]snapshot{"common": snap(common), "eight": snap(eight)}
	if diff := cmp.Diff(before, after); diff != "" {
		t.Errorf("maps held in common were written to (-before +after):\n%s", diff)
	}
}

// TestLongStringsNotInKeys: the keys of the table of shared subtrees hold
// strings longer than maxInternedLength by address, not in full, so that
// objects with large values met twice (a relist) do not copy them into the
// table.
func TestLongStringsNotInKeys(t *testing.T) {
	in := NewInterner(EqualSubtrees)
	const objects, size = 50, 10 << 10
	for range 2 { // listed twice
		for i := range objects {
			value := strings.Repeat(strconv.Itoa(i%10), size)
			content := map[string]any{"kind": "ConfigMap", "metadata": map[string]any{"name": "c" + strconv.Itoa(i)}, "data": map[string]any{"big": value}}
			in.Borrowed(content, RemakeForReads)
		}
	}
	keyBytes := 0
	for key := range in.subtrees {
		keyBytes += len(key)
	}
	if keyBytes > objects*256 {
		t.Errorf("the table's keys hold %d bytes for %d objects of %d-byte values, want at most %d", keyBytes, objects, size, objects*256)
	}
}
