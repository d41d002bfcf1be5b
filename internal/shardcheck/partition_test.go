package shardcheck

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestProblems(t *testing.T) {
	tests := []struct {
		name   string
		caches []map[string]bool
		want   map[string]bool
		got    []string
	}{
		{"partition", []map[string]bool{{"a": true}, {"b": true}}, map[string]bool{"a": true, "b": true}, nil},
		{"in two", []map[string]bool{{"a": true}, {"a": true, "b": true}}, map[string]bool{"a": true, "b": true}, []string{"a in replicas 0 and 1"}},
		{"in none", []map[string]bool{{"a": true}, {}}, map[string]bool{"a": true, "b": true}, []string{"b in no replica"}},
		{"not on the server", []map[string]bool{{"a": true, "c": true}}, map[string]bool{"a": true}, []string{"c in replica 0, not on the server"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.got, Problems(tt.caches, tt.want)); diff != "" {
				t.Errorf("Problems (-want +got):\n%s", diff)
			}
		})
	}
}
