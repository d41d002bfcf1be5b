package share

import (
	"hash/maphash"
	"slices"
	"sync"
	"unsafe"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// Bounds of an interner: a table that reaches its bound is emptied and
// starts again, so that values that never repeat (or a flood of distinct
// ones) cost at most this much, and values that come later (the label of a
// new rollout) are shared too. Objects keep the strings and trees they
// were given; only later objects stop sharing them.
const (
	// maxInternedStrings is how many distinct strings, each seen at least
	// twice, it holds: about 64 bytes each, 4 MiB at most.
	maxInternedStrings = 1 << 16
	// candidatePairBits is how many bits of a string's hash pick its pair
	// of candidate slots (see Interner.candidates): 2,048 pairs of 16-byte
	// slots, 64 KiB, and the strings they keep alive.
	candidatePairBits = 11
	// maxInternedLength is the longest string value it shares; longer ones
	// (annotations, payloads) rarely repeat.
	maxInternedLength = 64
	// maxSharedFieldSets is how many distinct managedFields fieldsV1 trees
	// it holds in each of its two tables (see Interner.fieldSets).
	maxSharedFieldSets = 1 << 12
	// maxSharedLabelSets is how many distinct metadata.labels maps it
	// holds.
	maxSharedLabelSets = 1 << 12
)

// Interner makes unstructured objects (the content of an
// *unstructured.Unstructured) share what repeats across them, as Sharer
// does for typed objects by their Go types. Its users are the decoders of
// typed.UnstructuredFor and the drop-in for dynamicinformer, which interns
// the dynamic client's objects as it ingests them:
//
//   - every map key, and every string value up to maxInternedLength long
//     but those of metadata that are unique to an object (name, uid,
//     resourceVersion, timestamps), is one string for all objects from its
//     second sighting on (see candidates): the kinds, apiVersions,
//     namespaces, label keys and values, field names;
//   - unless sharing is off, the fieldsV1 trees of managedFields that are
//     equal are one tree: the same fields, managed the same way, across
//     objects made alike (often over half of an object's maps);
//   - unless sharing is off, the metadata.labels maps that are equal are
//     one map: the Pods of a ReplicaSet, a Job or a DaemonSet, the objects
//     one Helm release or operator makes, have the same labels. A map costs
//     about 340 bytes whatever its size (Go's maps hold eight entries at
//     least), a cached object often several.
//
// Strings cannot be changed, so sharing them is invisible. Sharing trees
// is invisible to code that treats cached objects as read-only, as
// client-go requires of objects from a cache; a caller that edits labels
// or fieldsV1 in place before an object is cached (a transform) must give
// it maps of its own first, or turn tree sharing off.
//
// An Interner is safe for concurrent use: the decoders of every informer
// of a factory share one.
type Interner struct {
	// sharing is what it shares.
	sharing Sharing
	// shareTrees is whether equal fieldsV1 trees and labels maps are
	// shared (sharing EqualTrees or more).
	shareTrees bool
	// maxStrings, maxFieldSets, maxLabelSets and maxSubtrees bound the
	// tables (maxInternedStrings, maxSharedFieldSets, maxSharedLabelSets,
	// maxSharedSubtrees; smaller in tests).
	maxStrings, maxFieldSets, maxLabelSets, maxSubtrees int

	mu sync.Mutex
	// strings holds each string seen twice or more, boxed once.
	strings map[string]any
	// candidates holds strings seen once, boxed (see candidates): a
	// string enters strings when it is met again while still there, and
	// is then shared with the object it was first met in. Strings that
	// never repeat (references, hashes, the names in a spec) so cost no
	// memory beyond the fixed slots, where a table of every string would
	// hold one entry each (about 50 bytes an object for a CRD with one
	// such field).
	candidates candidates[any]
	// fieldSets are the shared fieldsV1 trees of the protobuf path, by
	// their encoded text; decodedFieldSets those of the JSON path, by
	// their treeKeys form (two tables: text and that form could be alike
	// for two different trees). A tree of one path is not shared with an
	// equal tree of the other: they are of different resources (built-in
	// kinds and CRDs), whose fieldsV1 seldom agree.
	fieldSets, decodedFieldSets map[string]map[string]any
	// labelSets are the shared labels maps, by their treeKeys form.
	labelSets map[string]map[string]any
	// subtrees are the shared maps and lists of EqualSubtrees, by their
	// treeKeys node form; subtreeCandidates the hashes of those forms met
	// once (see canonical).
	subtrees          map[string]any
	subtreeCandidates hashCandidates
	seed              maphash.Seed
	// treeKeys writes the keys of decodedFieldSets, labelSets and
	// subtrees.
	treeKeys treeKeys
	// scratch holds the entries of the maps a Borrowed walk is interning,
	// each map's after its parent's.
	scratch []entry
}

// Sharing is what an Interner shares across objects.
type Sharing uint8

const (
	// StringsOnly shares strings: invisible.
	StringsOnly Sharing = iota
	// EqualTrees shares strings, equal managedFields fieldsV1 trees and
	// equal metadata.labels maps.
	EqualTrees
	// EqualSubtrees shares strings, and every map or list equal to one
	// met before, wherever it is in an object (hash-consing, see
	// canonical): the containers, env, probes, ports, resources and
	// volume mounts of the Pods of a ReplicaSet, as well as the trees of
	// EqualTrees.
	EqualSubtrees
)

// NewInterner returns an Interner with empty tables, which shares what
// sharing says.
func NewInterner(sharing Sharing) *Interner {
	return &Interner{
		sharing: sharing, shareTrees: sharing >= EqualTrees,
		maxStrings: maxInternedStrings, maxFieldSets: maxSharedFieldSets, maxLabelSets: maxSharedLabelSets,
		maxSubtrees: maxSharedSubtrees,
		strings:     map[string]any{},
		fieldSets:   map[string]map[string]any{}, decodedFieldSets: map[string]map[string]any{},
		labelSets:  map[string]map[string]any{},
		subtrees:   map[string]any{},
		seed:       maphash.MakeSeed(),
		candidates: candidates[any]{bits: candidatePairBits},
	}
}

// smallMapEntries is the most entries a Go map holds in its small form
// (objectedit.Entries, which this leaf package cannot import): a full small
// map written to in place turns into a table, about twice the memory.
const smallMapEntries = 8

// Bound sets smaller bounds on in's tables, for tests that fill them, and
// returns in. Call it before in is used.
func (in *Interner) Bound(maxStrings, maxFieldSets, maxLabelSets int) *Interner {
	in.maxStrings, in.maxFieldSets, in.maxLabelSets = maxStrings, maxFieldSets, maxLabelSets
	return in
}

// uniqueMetadata are the fields of metadata whose values differ from object
// to object: not worth a place in the table.
var uniqueMetadata = map[string]bool{
	"name": true, "uid": true, "resourceVersion": true,
	"creationTimestamp": true, "deletionTimestamp": true, "selfLink": true,
}

// Remake says which maps of an object Interner.Object makes anew.
type Remake uint8

const (
	// KeepMaps keeps every map as decoded: encoding/json grows each to
	// its size.
	KeepMaps Remake = iota
	// RemakeForReads makes the object's content and metadata maps anew,
	// metadata first in its content and labels first in its metadata:
	// a List with a label selector reads those two entries of every
	// object, and reads each with one cache miss fewer when it is in the
	// first slot of its map, on the cache line of the map's control word
	// (Go puts a small map's entries in its slots in the order they are
	// added), and the two maps are allocated one after the other, where a
	// JSON decoder grows them in the order of the document, with the whole
	// spec between an object's metadata and its labels.
	RemakeForReads
	// RemakeAll makes every map anew at its size, as RemakeForReads
	// orders the first two: runtime.DefaultUnstructuredConverter makes
	// each map for as many entries as its Go struct has fields (seventeen
	// for an ObjectMeta that sets six), which in Go's maps is a table
	// several times the size of one made for the entries there are.
	RemakeAll
)

// Object interns the content of one decoded object and returns it, its
// maps made anew as remake says.
//
// fieldsV1, if not nil, holds the fieldsV1 tree of each entry of the
// object's managedFields that DetachFieldsV1 took out of it before its
// conversion to content (the protobuf path), nil for an entry whose
// fieldsV1 the conversion made.
//
// A nil Interner, or nil content, returns content as it is.
func (in *Interner) Object(content map[string]any, remake Remake, fieldsV1 []any) map[string]any {
	return in.intern(content, walk{in: in, remake: remake, fieldsV1: fieldsV1})
}

// Borrowed is Object for content the caller does not own: maps and lists
// that the objects of a transform or a ListerWatcher may hold in common (a
// map a transform sets in every object, an object a fake hands out
// twice). It writes into none of content's maps and lists: each that
// would change (a key or a value made shared) is a new one, and content
// itself is returned only if nothing in it changed. Objects are otherwise
// interned as Object interns them, without fieldsV1 taken out beforehand.
func (in *Interner) Borrowed(content map[string]any, remake Remake) map[string]any {
	return in.intern(content, walk{in: in, remake: remake, borrowed: true})
}

// intern is one object's walk w, under the lock.
func (in *Interner) intern(content map[string]any, w walk) map[string]any {
	if in == nil || content == nil {
		return content
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	return w.mapOf(content, w.remake != KeepMaps, func(key string, value any) any {
		if metadata, ok := value.(map[string]any); ok && key == "metadata" {
			return w.metadata(metadata)
		}
		return w.value(value)
	}, "metadata")
}

// walk is one object's interning, under the interner's lock.
type walk struct {
	in       *Interner
	remake   Remake
	fieldsV1 []any
	// borrowed is whether the walk may not write into the object's maps
	// and lists (Borrowed).
	borrowed bool
}

// mapOf interns m's keys and replaces each value v of key k with
// valueOf(k, v), in m or, if anew, in a new map of m's size. The entries
// of the keys first, if any, are done and added first: in a new map, they
// are then in its first slots (see RemakeForReads).
//
// A map of smallMapEntries entries is made anew too: written to in place,
// that full small map would turn into a table, about 330 bytes more for
// the same entries (a CustomResource's metadata without managedFields, or
// any object of eight fields in its spec).
func (w walk) mapOf(m map[string]any, anew bool, valueOf func(key string, value any) any, first ...string) map[string]any {
	if w.borrowed && !anew {
		return w.borrowedMapOf(m, valueOf, first...)
	}
	out := m
	if anew || len(m) == smallMapEntries {
		out = make(map[string]any, len(m))
	}
	for _, key := range first {
		if value, ok := m[key]; ok {
			out[w.in.key(key)] = valueOf(key, value)
		}
	}
	for key, value := range m {
		if !slices.Contains(first, key) {
			out[w.in.key(key)] = valueOf(key, value)
		}
	}
	return out
}

// borrowedMapOf is mapOf for a map the walk may not write into: the
// entries, interned, go to the interner's scratch list, and to a new map
// (in the same order) only if one of them changed; else m is returned.
func (w walk) borrowedMapOf(m map[string]any, valueOf func(key string, value any) any, first ...string) map[string]any {
	start := len(w.in.scratch)
	changed := false
	add := func(key string, value any) {
		k, v := w.in.key(key), valueOf(key, value)
		changed = changed || unsafe.StringData(k) != unsafe.StringData(key) || !sameBox(v, value)
		// After valueOf: the walks of m's own maps use the list above
		// start and leave it as they found it.
		w.in.scratch = append(w.in.scratch, entry{k, v})
	}
	for _, key := range first {
		if value, ok := m[key]; ok {
			add(key, value)
		}
	}
	for key, value := range m {
		if !slices.Contains(first, key) {
			add(key, value)
		}
	}
	entries := w.in.scratch[start:]
	out := m
	if changed {
		out = make(map[string]any, len(entries))
		for _, e := range entries {
			out[e.key] = e.value
		}
	}
	clear(entries) // keep no object alive
	w.in.scratch = w.in.scratch[:start]
	return out
}

// entry is one entry of a map being interned.
type entry struct {
	key   string
	value any
}

// sameBox reports whether a and b are one value: the same type and the
// same data word (a map, a boxed string or list).
func sameBox(a, b any) bool {
	return *(*[2]unsafe.Pointer)(unsafe.Pointer(&a)) == *(*[2]unsafe.Pointer)(unsafe.Pointer(&b))
}

// listOf replaces each item of list with valueOf(item): in list, or if the
// walk may not write into it (Borrowed), in a copy made at the first item
// that changes. It returns the list as a value: list boxed as it came
// (boxed) if it is still the one.
func (w walk) listOf(list []any, boxed any, valueOf func(item any) any) any {
	out := list
	for i, item := range list {
		v := valueOf(item)
		if w.borrowed && &out[0] == &list[0] && !sameBox(v, item) {
			out = slices.Clone(list)
		}
		out[i] = v
	}
	if len(list) > 0 && &out[0] != &list[0] {
		return out
	}
	return boxed
}

// metadata interns an object's metadata, leaving the values of
// uniqueMetadata alone, and shares its managedFields' fieldsV1 trees.
func (w walk) metadata(metadata map[string]any) map[string]any {
	return w.mapOf(metadata, w.remake != KeepMaps, func(key string, value any) any {
		switch {
		case uniqueMetadata[key]:
			return value
		case key == "managedFields":
			return w.managedFields(value)
		case key == "labels":
			return w.labelSet(value)
		}
		return w.value(value)
	}, "labels")
}

// labelSet returns the shared labels map equal to value, an object's
// metadata.labels (see sharedTree). A value that is not a map of strings
// (nor of maps of them) is interned as any other; so is an empty map.
func (w walk) labelSet(value any) any {
	labels, ok := value.(map[string]any)
	if !ok || len(labels) == 0 {
		return w.value(value)
	}
	return w.sharedTree(w.in.labelSets, w.in.maxLabelSets, labels)
}

// sharedTree returns the tree in table equal to tree, a decoded labels map
// or fieldsV1 tree, found by its treeKeys form; if there is none, tree,
// its strings interned, becomes the shared one (table holding at most max
// trees). With sharing off, or a tree treeKeys cannot write (a number in
// it), tree is only interned.
func (w walk) sharedTree(table map[string]map[string]any, max int, tree map[string]any) any {
	if !w.in.shareTrees {
		return w.value(tree)
	}
	key, ok := w.in.treeKeys.of(tree)
	if !ok {
		return w.value(tree)
	}
	if shared, ok := table[string(key)]; ok {
		return shared
	}
	k := string(key) // before w.value: key is valid until the next treeKeys.of
	tree = w.value(tree).(map[string]any)
	PutBounded(table, max, k, tree)
	return tree
}

// managedFields interns each entry of managedFields but its time, and
// replaces its fieldsV1 with the shared tree equal to it.
func (w walk) managedFields(value any) any {
	entries, ok := value.([]any)
	if !ok {
		return w.value(value)
	}
	i := -1
	return w.listOf(entries, value, func(e any) any {
		i++
		entry, ok := e.(map[string]any)
		if !ok {
			return e
		}
		fromRaw := false
		if i < len(w.fieldsV1) && w.fieldsV1[i] != nil {
			// The protobuf path's own entry (Object, not Borrowed).
			entry["fieldsV1"], fromRaw = w.fieldsV1[i], true
		}
		return w.mapOf(entry, w.remake == RemakeAll, func(key string, v any) any {
			switch {
			case key == "time", key == "fieldsV1" && fromRaw:
				return v
			case key == "fieldsV1":
				return w.fieldSet(v)
			}
			return w.value(v)
		})
	})
}

// fieldSet returns the shared tree equal to value, a fieldsV1 tree
// decoded from JSON (see sharedTree); a value that is not a map is
// interned as any other.
func (w walk) fieldSet(value any) any {
	tree, ok := value.(map[string]any)
	if !ok {
		return w.value(value)
	}
	return w.sharedTree(w.in.decodedFieldSets, w.in.maxFieldSets, tree)
}

// detachFieldsV1 takes out of obj's managedFields entries each fieldsV1
// that fieldSetOf reads, and returns their trees, in order: nil where an
// entry keeps its fieldsV1 for runtime.DefaultUnstructuredConverter (it
// has none, or one fieldSetOf does not read). obj is the decoder's own,
// about to be converted and dropped. A nil interner detaches nothing.
func (in *Interner) DetachFieldsV1(obj runtime.Object) []any {
	if in == nil {
		return nil
	}
	accessor, err := meta.Accessor(obj)
	if err != nil {
		return nil
	}
	entries := accessor.GetManagedFields()
	if len(entries) == 0 {
		return nil
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	w := walk{in: in, remake: RemakeAll}
	trees := make([]any, len(entries))
	for i := range entries {
		// GetRawBytes, not Raw: with apimachinery's fieldsv1string build
		// tag a FieldsV1 holds a string, and GetRawBytes copies it.
		if tree, ok := w.fieldSetOf(entries[i].FieldsV1.GetRawBytes()); ok {
			trees[i] = tree
			entries[i].FieldsV1 = nil
		}
	}
	return trees
}

// fieldSetOf returns the shared tree of raw, an encoded fieldsV1 (with
// sharing off, raw decoded), if raw is one it decodes exactly as
// runtime.DefaultUnstructuredConverter decodes it: a JSON object, first
// byte '{', which the converter decodes as JSON (FieldsV1.MarshalJSON
// gives it as it is). Anything else, left to the converter, is false: a
// fieldsV1 in CBOR (KEP-4222), which the converter turns into JSON first;
// malformed JSON, or a JSON object after white space, which fail the
// object's conversion, as in client-go; null and a JSON list, which the
// converter reads as nil and a list. The two JSON decoders agree on every
// JSON object (numbers, duplicate keys, invalid UTF-8, trailing data, the
// depth limit of 10,000); FuzzProtobufToUnstructured holds this path
// equal to the converter's.
func (w walk) fieldSetOf(raw []byte) (any, bool) {
	if len(raw) == 0 || raw[0] != '{' {
		return nil, false
	}
	if shared, ok := w.in.fieldSets[string(raw)]; ok && w.in.shareTrees {
		return shared, true
	}
	var tree map[string]any
	if err := utiljson.Unmarshal(raw, &tree); err != nil {
		return nil, false
	}
	interned := w.value(tree).(map[string]any) // w.value returns a map for a map
	if w.in.shareTrees {
		PutBounded(w.in.fieldSets, w.in.maxFieldSets, string(raw), interned)
	}
	return interned, true
}

// value interns a value's strings (a string itself, a map's keys and
// values, a list's items) and returns it.
func (w walk) value(value any) any {
	switch v := value.(type) {
	case string:
		if len(v) <= maxInternedLength && !isTimestamp(v) {
			return w.in.boxed(v, value)
		}
	case map[string]any:
		m := w.mapOf(v, w.remake == RemakeAll, func(_ string, item any) any { return w.value(item) })
		if w.in.sharing == EqualSubtrees {
			return w.canonical(m)
		}
		return m
	case []any:
		list := w.listOf(v, value, w.value)
		if w.in.sharing == EqualSubtrees {
			return w.canonical(list)
		}
		return list
	}
	return value
}

// key returns the shared copy of key.
func (in *Interner) key(key string) string {
	return in.boxed(key, nil).(string)
}

// boxed returns the shared boxed copy of s; boxedS, if not nil, is s
// already boxed, to keep if s is new. A string met for the first time is
// only a candidate (see Interner.candidates); met again, it is shared.
func (in *Interner) boxed(s string, boxedS any) any {
	if shared, ok := in.strings[s]; ok {
		return shared
	}
	if boxedS == nil {
		boxedS = s
	}
	if shared, ok := in.candidates.metBefore(hashOf(s), boxedS); ok {
		PutBounded(in.strings, in.maxStrings, s, shared)
		return shared
	}
	return boxedS
}

// hashOf returns the hash that picks s's pair of candidate slots (its
// high bits): s's 64-bit FNV-1a hash, mixed by MurmurHash3's finalizer
// (fmix64). Without the mix, strings that differ only in their
// last byte (team-1, team-2, team-3; app-0 to app-9; zone-a, zone-b) had
// the same high bits, so one pair, and three of them in turn never stayed
// long enough to be shared. A hash of its own, with no random seed, so
// that which strings share a pair is the same in every run (a flood of
// strings chosen to share one pair costs only their own sharing). Written
// out rather than hash/fnv, whose New64a and Write cost two allocations a
// string (32 B, 65 ns measured), on every string of every object decoded.
func hashOf(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}

// isTimestamp reports whether s has the shape of a metav1.Time
// ("2026-12-01T10:00:00Z"): the conditions and managedFields of every
// object hold some, seldom the same, and they would crowd the table.
func isTimestamp(s string) bool {
	return len(s) == len("2006-01-02T15:04:05Z") && s[4] == '-' && s[7] == '-' && s[10] == 'T' && s[13] == ':' && s[16] == ':' && s[19] == 'Z'
}
