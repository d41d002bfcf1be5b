package main

import (
	"errors"
	"flag"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestParseFlags: the flags land in options (-apiserver-flag repeatable);
// -h is flag.ErrHelp; an unknown flag or a stray argument is an error.
func TestParseFlags(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		want     options
		wantErr  bool
		wantHelp bool
	}{
		{name: "none", args: nil, want: options{}},
		{
			name: "every flag",
			args: []string{"-kubeconfig", "/tmp/k", "-apiserver-flag", "--a=1", "-apiserver-flag=--b=2", "-v", "4"},
			want: options{kubeconfig: "/tmp/k", apiserverFlags: []string{"--a=1", "--b=2"}, verbosity: 4},
		},
		{name: "help", args: []string{"-h"}, wantErr: true, wantHelp: true},
		{name: "unknown flag", args: []string{"-port", "1"}, wantErr: true},
		{name: "stray argument", args: []string{"-kubeconfig", "/tmp/k", "extra"}, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseFlags(tc.args)
			if diff := cmp.Diff(tc.wantErr, err != nil); diff != "" {
				t.Fatalf("parseFlags error %v (-want +got error):\n%s", err, diff)
			}
			if diff := cmp.Diff(tc.wantHelp, errors.Is(err, flag.ErrHelp)); diff != "" {
				t.Errorf("flag.ErrHelp (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(options{})); diff != "" {
				t.Errorf("options (-want +got):\n%s", diff)
			}
		})
	}
}
