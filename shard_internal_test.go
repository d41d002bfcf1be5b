package generic

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseShard(t *testing.T) {
	tests := []struct {
		in      string
		want    Shard
		wantErr string
	}{
		{"0/1", Shard{0, 1}, ""},
		{"1/3", Shard{1, 3}, ""},
		{"3/3", Shard{}, "invalid shard 3/3"},
		{"-1/2", Shard{}, "invalid shard -1/2"},
		{"1/0", Shard{}, "count must be at least 1"},
		{"1", Shard{}, "want index/count"},
		{"1/3x", Shard{}, "want index/count"},
		{"", Shard{}, "want index/count"},
		{"a/b", Shard{}, "want index/count"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseShard(tt.in)
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && !strings.Contains(gotErr, tt.wantErr) {
				t.Fatalf("ParseShard(%q) error = %v, want one containing %q", tt.in, err, tt.wantErr)
			}
			if err == nil {
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("ParseShard(%q) (-want +got):\n%s", tt.in, diff)
				}
			}
		})
	}
}
