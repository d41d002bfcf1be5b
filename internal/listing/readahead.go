package listing

// aheadValue is the value of the selector's first key in one object's
// metadata.labels map, read by readAhead before the match: the map's value
// (nil if absent or null) and whether the key is there.
type aheadValue struct {
	value any
	ok    bool
}

// readAhead reads, in each labels map of found, the value of the key of
// the selector's first requirement into ahead (ahead[i] for found[i]),
// then the header of each value that is a string, then its first byte: a
// pass per step, as appendMatching reads the levels, so that the misses
// of many objects are under way at once where the match would take them
// one after the other (the map's group, the key's bytes, the string's
// header, its bytes: four misses in a row per object, on an object whose
// labels map is its own). The match then reads the value from ahead
// (aheadLabels), not from the map again.
//
// A selector without requirements (Requirements false) reads nothing
// ahead.
func (m *matcher) readAhead(found []unstructuredLabels, ahead []aheadValue) {
	if !m.hasKey {
		return
	}
	key := m.view.key
	for i, l := range found {
		ahead[i].value, ahead[i].ok = l[key]
	}
	for _, a := range ahead {
		if s, ok := a.value.(string); ok {
			m.entries += len(s)
		}
	}
	for _, a := range ahead {
		if s, ok := a.value.(string); ok && s != "" {
			m.entries += int(s[0])
		}
	}
}

// aheadLabels is an object's metadata.labels map as a labels.Labels, as
// unstructuredLabels reads it, with the value of key read ahead: a lookup
// of key answers from ahead, any other from labels.
type aheadLabels struct {
	labels unstructuredLabels
	key    string
	ahead  aheadValue
}

func (a *aheadLabels) Has(label string) bool {
	if label == a.key {
		return a.ahead.ok
	}
	return a.labels.Has(label)
}

func (a *aheadLabels) Get(label string) string {
	if label == a.key {
		s, _ := a.ahead.value.(string)
		return s
	}
	return a.labels.Get(label)
}

func (a *aheadLabels) Lookup(label string) (string, bool) {
	if label == a.key {
		s, _ := a.ahead.value.(string)
		return s, a.ahead.ok
	}
	return a.labels.Lookup(label)
}
