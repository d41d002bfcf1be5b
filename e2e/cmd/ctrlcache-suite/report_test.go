package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestReport: the summary of a run, from go test's JSON events and Ginkgo's
// JSON report (testdata/report/CASE), counts specs and plain tests per
// package (a spec's package is its file's; the Ginkgo runner TestSource and
// subtests are not plain tests), lists every failure (a failed plain test,
// a failed spec with Gomega's message, a panicked AfterSuite), prints go
// test's own output when the suite did not build, and exits 1 unless all
// passed.
func TestReport(t *testing.T) {
	tests := []struct {
		name       string
		mode       string
		wantStatus int
	}{
		{name: "pass", mode: "ctrlcache", wantStatus: 0},
		{name: "failures", mode: "controller-runtime", wantStatus: 1},
		{name: "no-build", mode: "ctrlcache", wantStatus: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join("testdata", "report", tc.name)
			var stdout, stderr bytes.Buffer
			status := mainStatus([]string{"report", "-mode", tc.mode, "-dir", "testdata/report/pkg",
				"-go-json", filepath.Join(dir, "go-test.json"), "-ginkgo-json", filepath.Join(dir, "ginkgo.json")}, &stdout, &stderr)
			want, err := os.ReadFile(filepath.Join(dir, "want.txt"))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(string(want), stdout.String()); diff != "" {
				t.Errorf("summary (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantStatus, status); diff != "" {
				t.Errorf("exit status (-want +got), stderr %q:\n%s", stderr.String(), diff)
			}
		})
	}
}

// TestMainStatusUsage: bad usage is exit status 2 with the usage on stderr.
func TestMainStatusUsage(t *testing.T) {
	tests := []struct {
		name string
		args []string
	}{
		{name: "no subcommand"},
		{name: "unknown subcommand", args: []string{"run"}},
		{name: "rewrite without DIR", args: []string{"rewrite"}},
		{name: "report without flags", args: []string{"report"}},
		{name: "report with an unknown mode", args: []string{"report", "-mode", "other", "-dir", "d", "-go-json", "g", "-ginkgo-json", "j"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if diff := cmp.Diff(2, mainStatus(tc.args, &stdout, &stderr)); diff != "" {
				t.Errorf("exit status (-want +got):\n%s", diff)
			}
			if !bytes.Contains(stderr.Bytes(), []byte("usage:")) {
				t.Errorf("stderr %q, want the usage", stderr.String())
			}
		})
	}
}
