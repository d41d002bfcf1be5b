package kwatch

import (
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestResolveShard checks --shard as resolve validates it: index/count with
// 0 <= index < count is taken as given, anything else is an error that
// names the flag and says what it wants.
func TestResolveShard(t *testing.T) {
	tests := []struct {
		shard   string
		wantErr string
	}{
		{shard: ""},
		{shard: "0/1"},
		{shard: "0/2"},
		{shard: "1/2"},
		{shard: "2/3"},
		{shard: "2/2", wantErr: "--shard: generic: invalid shard 2/2: want 0 <= index < count"},
		{shard: "-1/2", wantErr: "--shard: generic: invalid shard -1/2: want 0 <= index < count"},
		{shard: "0/-2", wantErr: "--shard: generic: invalid shard 0/-2: count must be at least 1"},
		{shard: "1/0", wantErr: "--shard: generic: invalid shard 1/0: count must be at least 1"},
		{shard: "1", wantErr: `--shard: generic: shard "1": want index/count, for example 1/3`},
		{shard: "1/", wantErr: `--shard: generic: shard "1/": want index/count, for example 1/3`},
		{shard: "/2", wantErr: `--shard: generic: shard "/2": want index/count, for example 1/3`},
		{shard: "1/2/3", wantErr: `--shard: generic: shard "1/2/3": want index/count, for example 1/3`},
		{shard: "a/b", wantErr: `--shard: generic: shard "a/b": want index/count, for example 1/3`},
		{shard: " 0/2", wantErr: `--shard: generic: shard " 0/2": want index/count, for example 1/3`},
		{shard: "1 of 3", wantErr: `--shard: generic: shard "1 of 3": want index/count, for example 1/3`},
	}
	for _, tt := range tests {
		t.Run(tt.shard, func(t *testing.T) {
			got, err := Options{Shard: tt.shard}.resolve()
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if diff := cmp.Diff(tt.wantErr, gotErr); diff != "" {
				t.Fatalf("resolve() error (-want +got):\n%s", diff)
			}
			if err == nil && got.Shard != tt.shard {
				t.Errorf("resolve() changed --shard %q to %q", tt.shard, got.Shard)
			}
		})
	}
}

// TestMemberFlag checks --member: a group, or group/identity, read as the
// Membership's; with --shard, or without a group, an error.
func TestMemberFlag(t *testing.T) {
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		member, shard          string
		wantGroup, wantID, err string
	}{
		{member: "ctl/pod-1", wantGroup: "ctl", wantID: "pod-1"},
		{member: "ctl", wantGroup: "ctl", wantID: strings.ToLower(host)},
		{member: "/pod-1", err: `--member "/pod-1": want group or group/identity`},
		{member: "ctl", shard: "0/2", err: "--member and --shard: the membership gives the shard"},
	}
	for _, tt := range tests {
		t.Run(tt.member+" "+tt.shard, func(t *testing.T) {
			opts, err := Options{Member: tt.member, Shard: tt.shard}.resolve()
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if diff := cmp.Diff(tt.err, gotErr); diff != "" || err != nil {
				if diff != "" {
					t.Errorf("resolve() error (-want +got):\n%s", diff)
				}
				return
			}
			m, err := opts.membership(nil)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string{tt.wantGroup, tt.wantID}, []string{m.Group, m.Identity}); diff != "" {
				t.Errorf("group and identity (-want +got):\n%s", diff)
			}
		})
	}
}
