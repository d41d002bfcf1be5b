package listing

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
)

// TestMatcherRemembersOnlyTheMapItValidated feeds one matcher (one List
// call) labels maps in a fixed order, well formed and malformed maps of the
// same labels in turn, and compares its answers with the selector's on
// GetLabels: the map it last found valid is skipped by identity, and no
// other map, however alike, inherits that.
func TestMatcherRemembersOnlyTheMapItValidated(t *testing.T) {
	valid := map[string]any{"app": "app-3"}
	validToo := map[string]any{"app": "app-3"}
	invalid := map[string]any{"app": "app-3", "n": int64(1)}
	nullValue := map[string]any{"app": "app-3", "tier": nil}
	for _, tt := range []struct {
		name     string
		selector string
		maps     []map[string]any
		want     []bool
	}{
		{"valid, then malformed", "app=app-3", []map[string]any{valid, invalid, valid, invalid}, []bool{true, false, true, false}},
		{"malformed, then valid", "app=app-3", []map[string]any{invalid, invalid, valid, valid}, []bool{false, false, true, true}},
		{"equal maps, one after the other", "app=app-3", []map[string]any{valid, validToo, valid}, []bool{true, true, true}},
		{"a null value is valid", "app=app-3", []map[string]any{nullValue, invalid, nullValue}, []bool{true, false, true}},
		{"a selector that matches no labels", "!n", []map[string]any{valid, invalid, valid, invalid}, []bool{true, true, true, true}},
		{"a selector that only malformed maps fail", "app", []map[string]any{invalid, valid, invalid}, []bool{false, true, false}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			selector, err := labels.Parse(tt.selector)
			if err != nil {
				t.Fatal(err)
			}
			m := newMatcher(selector)
			defer m.release()
			var got, clientGo []bool
			for _, l := range tt.maps {
				u := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"labels": l}}}
				var ahead [1]aheadValue
				m.readAhead([]unstructuredLabels{l}, ahead[:])
				matches, err := m.matches(u, l, ahead[0])
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, matches)
				clientGo = append(clientGo, selector.Matches(labels.Set(u.GetLabels())))
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("matches (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(clientGo, got); diff != "" {
				t.Errorf("matches (-client-go +generic):\n%s", diff)
			}
		})
	}
}
