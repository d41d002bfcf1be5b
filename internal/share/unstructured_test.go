package share

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/generic-informers/generic/internal/heaptest"
)

// TestInternerSharesWhatRepeats decodes a list of ConfigMaps, two of them
// managed alike and labelled alike, through the JSON decoder of
// UnstructuredFor: the objects equal the dynamic client's; strings that
// repeat are one string, but those unique to an object are not kept; equal
// fieldsV1 trees are one tree, and equal labels one map, unless sharing is
// off.
func TestInternerSharesWhatRepeats(t *testing.T) {
	type sharing struct {
		Kinds, Namespaces, LabelValues, Managers, DataKeys bool
		FieldsV1OfOneAndTwo, FieldsV1OfOneAndThree         bool
		LabelsOfOneAndTwo                                  bool
		UIDsKept, ResourceVersionsKept, TimesKept          bool
	}
	for _, tc := range []struct {
		name       string
		shareTrees bool
		want       sharing
	}{
		{"sharing", true, sharing{Kinds: true, Namespaces: true, LabelValues: true, Managers: true, DataKeys: true, FieldsV1OfOneAndTwo: true, LabelsOfOneAndTwo: true}},
		{"no sharing", false, sharing{Kinds: true, Namespaces: true, LabelValues: true, Managers: true, DataKeys: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := NewInterner(sharingOf(tc.shareTrees))
			data := readFixture(t, "configmap-list-managed.json")
			list := decodeJSONWith(t, in, data).(*unstructured.UnstructuredList)
			want := dynamicClientDecode(t, data)
			if diff := cmp.Diff(want, list); diff != "" {
				t.Fatalf("decoded (-dynamic client +interned):\n%s", diff)
			}
			one, two, three := list.Items[0].Object, list.Items[1].Object, list.Items[2].Object
			got := sharing{
				Kinds:                 sameStringAt(one, two, "kind"),
				Namespaces:            sameStringAt(one, two, "metadata", "namespace"),
				LabelValues:           sameStringAt(one, two, "metadata", "labels", "app"),
				Managers:              sameStringAt(one, two, "metadata", "managedFields", "0", "manager"),
				DataKeys:              sameKey(one, two, "data"),
				FieldsV1OfOneAndTwo:   sameMapAt(one, two, "metadata", "managedFields", "0", "fieldsV1"),
				FieldsV1OfOneAndThree: sameMapAt(one, three, "metadata", "managedFields", "0", "fieldsV1"),
				LabelsOfOneAndTwo:     sameMapAt(one, two, "metadata", "labels"),
				UIDsKept:              in.holds(string(list.Items[0].GetUID())),
				ResourceVersionsKept:  in.holds(list.Items[0].GetResourceVersion()),
				TimesKept:             in.holds("2026-12-01T10:00:00Z"),
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("shared (-want +got):\n%s", diff)
			}
		})
	}
}

// TestInternerConcurrentDecodes: the informers of a factory decode at the
// same time through one interner (run with -race).
func TestInternerConcurrentDecodes(t *testing.T) {
	in := NewInterner(EqualTrees)
	data := readFixture(t, "configmap-list-managed.json")
	want := dynamicClientDecode(t, data)
	var g sync.WaitGroup
	results := make([]runtime.Object, 8)
	for i := range results {
		g.Go(func() { results[i] = decodeJSONWith(t, in, data) })
	}
	g.Wait()
	for i, got := range results {
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("decode %d (-dynamic client +interned):\n%s", i, diff)
		}
	}
}

func decodeJSONWith(t *testing.T, in *Interner, data []byte) runtime.Object {
	t.Helper()
	obj, err := runtime.Decode(unstructured.UnstructuredJSONScheme, data)
	if err != nil {
		t.Fatal(err)
	}
	switch obj := obj.(type) {
	case *unstructured.Unstructured:
		obj.Object = in.Object(obj.Object, KeepMaps, nil)
	case *unstructured.UnstructuredList:
		for i := range obj.Items {
			obj.Items[i].Object = in.Object(obj.Items[i].Object, KeepMaps, nil)
		}
	}
	return obj
}

// dynamicClientDecode decodes data as client-go's dynamic client does.
func dynamicClientDecode(t *testing.T, data []byte) runtime.Object {
	t.Helper()
	return decodeJSONWith(t, nil, data)
}

func readFixture(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// holds reports whether the interner keeps s, shared or as a candidate.
func (in *Interner) holds(s string) bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	if _, ok := in.strings[s]; ok {
		return true
	}
	for _, c := range in.candidates.slots {
		if c == any(s) {
			return true
		}
	}
	return false
}

// field returns the value at path in content; a number in the path
// indexes a list.
func at(content map[string]any, path ...string) any {
	var v any = content
	for _, p := range path {
		switch node := v.(type) {
		case map[string]any:
			v = node[p]
		case []any:
			v = node[int(p[0]-'0')]
		}
	}
	return v
}

// sameStringAt reports whether the string at path in a and b is one
// string in memory.
func sameStringAt(a, b map[string]any, path ...string) bool {
	sa, _ := at(a, path...).(string)
	sb, _ := at(b, path...).(string)
	return sameString(sa, sb)
}

// sameKey reports whether the keys of the one-key maps at path in a and b
// are one string in memory.
func sameKey(a, b map[string]any, path ...string) bool {
	ma, _ := at(a, path...).(map[string]any)
	mb, _ := at(b, path...).(map[string]any)
	var ka, kb string
	for k := range ma {
		ka = k
	}
	for k := range mb {
		kb = k
	}
	return ka == kb && ka != "" && unsafe.StringData(ka) == unsafe.StringData(kb)
}

// sameMapAt reports whether the maps at path in a and b are one map.
func sameMapAt(a, b map[string]any, path ...string) bool {
	ma, _ := at(a, path...).(map[string]any)
	mb, _ := at(b, path...).(map[string]any)
	return sameMap(ma, mb)
}

// TestInternerBounds: a table that reaches its bound starts again, so it
// never holds more; timestamps are not held; the objects are the same.
func TestInternerBounds(t *testing.T) {
	type held struct {
		Strings, FieldSets int
		Timestamp          bool
	}
	in := NewInterner(EqualTrees)
	in.maxStrings, in.maxFieldSets = 4, 1
	var got held
	for i := range 20 {
		name := "value-" + string(rune('a'+i))
		content := map[string]any{"spec": map[string]any{"name": name, "since": "2026-12-01T10:00:00Z"},
			"metadata": map[string]any{"managedFields": []any{map[string]any{"fieldsV1": map[string]any{"f:" + name: map[string]any{}}}}}}
		want := runtime.DeepCopyJSON(content)
		out := in.Object(content, Remake(i%3), nil)
		if diff := cmp.Diff(want, out); diff != "" {
			t.Fatalf("object %d changed (-want +got):\n%s", i, diff)
		}
		got.Strings, got.FieldSets = max(got.Strings, len(in.strings)), max(got.FieldSets, len(in.decodedFieldSets))
		got.Timestamp = got.Timestamp || in.holds("2026-12-01T10:00:00Z")
	}
	if diff := cmp.Diff(held{Strings: 4, FieldSets: 1}, got); diff != "" {
		t.Errorf("most held (-want +got):\n%s", diff)
	}
}

// TestInternerLabelSets: equal metadata.labels maps of objects are one map,
// other labels are not, even where keys and values written one after the
// other, NUL-separated, would be alike; a labels map that is not all
// strings is not shared; a full table starts again. The objects are the same either way.
func TestInternerLabelSets(t *testing.T) {
	withLabels := func(labels any) map[string]any {
		return map[string]any{"kind": "ConfigMap", "metadata": map[string]any{"name": "x", "labels": labels}}
	}
	tests := []struct {
		name        string
		share       bool
		maxSets     int
		first, then any
		want        bool
	}{
		{name: "equal labels", share: true, first: map[string]any{"app": "web", "tier": "front"}, then: map[string]any{"tier": "front", "app": "web"}, want: true},
		{name: "other labels", share: true, first: map[string]any{"app": "web"}, then: map[string]any{"app": "db"}},
		{name: "a label more", share: true, first: map[string]any{"app": "web"}, then: map[string]any{"app": "web", "tier": "front"}},
		{name: "sharing off", first: map[string]any{"app": "web"}, then: map[string]any{"app": "web"}},
		{name: "a value that is not a string", share: true, first: map[string]any{"app": int64(1)}, then: map[string]any{"app": int64(1)}},
		{name: "keys with NULs", share: true, first: map[string]any{"a\x00b": "c"}, then: map[string]any{"a\x00b": "c"}, want: true},
		{name: "a NUL where two maps written with separators would be alike", share: true, first: map[string]any{"a\x00b": "c"}, then: map[string]any{"a": "b\x00c"}},
		{name: "empty labels", share: true, first: map[string]any{}, then: map[string]any{}},
		{name: "a full table starts again", share: true, maxSets: 1, first: map[string]any{"app": "web"}, then: map[string]any{"app": "web"}, want: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := NewInterner(sharingOf(tc.share))
			first, then := withLabels(tc.first), withLabels(tc.then)
			wantFirst, wantThen := runtime.DeepCopyJSON(first), runtime.DeepCopyJSON(then)
			first = in.Object(first, KeepMaps, nil)
			if tc.maxSets > 0 {
				// Another labels map fills the table: the first is forgotten.
				in.maxLabelSets = tc.maxSets
				in.Object(withLabels(map[string]any{"other": "labels"}), KeepMaps, nil)
			}
			then = in.Object(then, RemakeAll, nil)
			if diff := cmp.Diff(wantFirst, first); diff != "" {
				t.Errorf("first object (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(wantThen, then); diff != "" {
				t.Errorf("second object (-want +got):\n%s", diff)
			}
			if got := sameMapAt(first, then, "metadata", "labels"); got != tc.want {
				t.Errorf("labels one map: %v, want %v", got, tc.want)
			}
			if tc.maxSets > 0 && len(in.labelSets) > tc.maxSets {
				t.Errorf("holds %d labels maps, at most %d", len(in.labelSets), tc.maxSets)
			}
		})
	}
}

// TestInternerStringsSeenTwice: a string enters the interner's table when
// it is met a second time, and is then one string in both objects; a
// string met once stays out of the table, whatever the number of such
// strings, and costs only the candidate slot it replaces.
func TestInternerStringsSeenTwice(t *testing.T) {
	a, b := onePair()
	tests := []struct {
		name        string
		values      []string // spec.ref of successive objects
		wantShared  [][2]int // pairs of objects whose spec.ref is one string
		wantInTable []string
	}{
		{name: "never repeats", values: []string{"cm-1", "cm-2", "cm-3"}},
		{name: "met twice", values: []string{"blue", "cm-2", "blue"}, wantShared: [][2]int{{0, 2}}, wantInTable: []string{"blue"}},
		{name: "met three times", values: []string{"blue", "blue", "blue"}, wantShared: [][2]int{{0, 1}, {0, 2}, {1, 2}}, wantInTable: []string{"blue"}},
		{name: "two of one pair in turn", values: []string{a, b, a, b}, wantShared: [][2]int{{0, 2}, {1, 3}}, wantInTable: []string{a, b}},
		{
			// Names that differ only in their last byte, as namespaces,
			// zones and label values often do, in turn: each has a pair
			// of its own, or shares one with one other at most.
			name:        "names that differ in their last byte, in turn",
			values:      []string{"team-1", "team-2", "team-3", "team-4", "team-1", "team-2", "team-3", "team-4"},
			wantShared:  [][2]int{{0, 4}, {1, 5}, {2, 6}, {3, 7}},
			wantInTable: []string{"team-1", "team-2", "team-3", "team-4"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := NewInterner(EqualTrees)
			var objects []map[string]any
			for _, v := range tc.values {
				// A string of its own, as a decoder makes one.
				ref := string([]byte(v))
				content := map[string]any{"spec": map[string]any{"ref": ref}}
				want := runtime.DeepCopyJSON(content)
				out := in.Object(content, KeepMaps, nil)
				if diff := cmp.Diff(want, out); diff != "" {
					t.Fatalf("object changed (-want +got):\n%s", diff)
				}
				objects = append(objects, out)
			}
			var shared [][2]int
			for i := range objects {
				for j := i + 1; j < len(objects); j++ {
					if sameStringAt(objects[i], objects[j], "spec", "ref") {
						shared = append(shared, [2]int{i, j})
					}
				}
			}
			if diff := cmp.Diff(tc.wantShared, shared); diff != "" {
				t.Errorf("one string (-want +got):\n%s", diff)
			}
			var inTable []string
			for s := range in.strings {
				if s != "spec" && s != "ref" {
					inTable = append(inTable, s)
				}
			}
			slices.Sort(inTable)
			if diff := cmp.Diff(tc.wantInTable, inTable); diff != "" {
				t.Errorf("values in the table (-want +got):\n%s", diff)
			}
		})
	}
}

// onePair returns two strings, in order, whose candidate slots are one
// pair.
func onePair() (string, string) {
	first := map[uint64]string{}
	for i := 0; ; i++ {
		s := "ref-" + strconv.Itoa(i)
		if other, ok := first[hashOf(s)>>(64-candidatePairBits)]; ok {
			return min(other, s), max(other, s)
		}
		first[hashOf(s)>>(64-candidatePairBits)] = s
	}
}

// TestInterningAddsNoCostToAField decodes lists of objects whose spec
// has none to nine fields through the JSON decoder, with and without
// interning, and measures the live heap each list holds: one field more
// must cost no more interned than decoded (interning only shares). Written
// to in place, a full small Go map (eight entries, objectedit.Entries)
// turned into a table: the eighth field cost about 330 bytes an object
// interned, 32 decoded.
func TestInterningAddsNoCostToAField(t *testing.T) {
	const objects, maxFields = 2000, 9
	// slack is what two measures of a live heap differ by with nothing
	// changed, and more: a few KiB, a byte or two an object.
	const slack = 16
	var decoded, interned [maxFields + 1]int64
	// One decode first, so that the codecs' one-time set-up counts in none
	// of the measures.
	decodeJSONWith(t, NewInterner(EqualTrees), objectListJSON(t, 1, 1))
	for fields := range maxFields + 1 {
		data := objectListJSON(t, objects, fields)
		decoded[fields] = heaptest.Of(func() any { return decodeJSONWith(t, nil, data) }) / objects
		interned[fields] = heaptest.Of(func() any { return decodeJSONWith(t, NewInterner(EqualTrees), data) }) / objects
	}
	var costlier []string
	for fields := 1; fields <= maxFields; fields++ {
		field, fieldInterned := decoded[fields]-decoded[fields-1], interned[fields]-interned[fields-1]
		if fieldInterned > field+slack {
			costlier = append(costlier, fmt.Sprintf("field %d: %d B an object interned, %d B decoded", fields, fieldInterned, field))
		}
	}
	if diff := cmp.Diff([]string(nil), costlier); diff != "" {
		t.Errorf("fields that cost more interned than decoded (-want +got):\n%s", diff)
	}
}

// objectListJSON encodes a list of n objects with a spec of fields fields,
// each value a string unique to its object (nothing to share but keys).
func objectListJSON(t *testing.T, n, fields int) []byte {
	t.Helper()
	items := make([]any, n)
	for i := range items {
		spec := map[string]any{}
		for f := range fields {
			spec["field-"+strconv.Itoa(f)] = "value-" + strconv.Itoa(i) + "-" + strconv.Itoa(f)
		}
		items[i] = map[string]any{
			"apiVersion": "example.com/v1", "kind": "Widget",
			"metadata": map[string]any{"name": "w-" + strconv.Itoa(i), "namespace": "ns"},
			"spec":     spec,
		}
	}
	data, err := json.Marshal(map[string]any{"apiVersion": "example.com/v1", "kind": "WidgetList", "items": items})
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// sharingOf is the Sharing of a test case that shares trees or not.
func sharingOf(trees bool) Sharing {
	if trees {
		return EqualTrees
	}
	return StringsOnly
}
