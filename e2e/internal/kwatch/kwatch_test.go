package kwatch_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/generic-informers/generic/e2e/internal/kwatch"
)

const testdata = "../../../testdata"

// TestDemo runs the demo as the README's main-job command does and checks
// that its summary, returned and printed, adds up to what its script did.
func TestDemo(t *testing.T) {
	want, err := kwatch.DemoExpected(testdata, 0)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		output string
	}{
		{name: "text", output: "text"},
		{name: "json", output: "json"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out, status bytes.Buffer
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			got, err := kwatch.Run(ctx, kwatch.Options{Testdata: testdata, Output: tc.output, Out: &out, Err: &status})
			if err != nil {
				t.Fatalf("demo: %v\n%s%s", err, out.String(), status.String())
			}
			if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(kwatch.ResourceSummary{}, "SyncTime")); diff != "" {
				t.Errorf("summary (-want +got):\n%s", diff)
			}
			for _, r := range got {
				if r.SyncTime <= 0 {
					t.Errorf("%s: no sync time", r.Resource)
				}
			}
			printed := out.String()
			if tc.output == "json" {
				printed = status.String()
				checkJSONLines(t, out.String(), want)
			}
			if diff := cmp.Diff(want, parseSummaryTable(t, printed)); diff != "" {
				t.Errorf("printed summary (-want +got):\n%s\n%s", diff, printed)
			}
		})
	}
}

// parseSummaryTable reads the counts of the table Summary.Print wrote.
func parseSummaryTable(t *testing.T, output string) kwatch.Summary {
	t.Helper()
	var got kwatch.Summary
	inTable := false
	scanner := bufio.NewScanner(strings.NewReader(output))
	for scanner.Scan() {
		fields := strings.Fields(scanner.Text())
		if len(fields) > 0 && fields[0] == "RESOURCE" {
			inTable = true
			continue
		}
		if !inTable || len(fields) < 7 {
			continue
		}
		n := make([]int, 4)
		for i := range n {
			v, err := strconv.Atoi(fields[i+1])
			if err != nil {
				t.Fatalf("summary line %q: %v", scanner.Text(), err)
			}
			n[i] = v
		}
		got = append(got, kwatch.ResourceSummary{Resource: fields[0], Cached: n[0], Added: n[1], Modified: n[2], Deleted: n[3], State: fields[6]})
	}
	return got
}

// checkJSONLines checks that stdout holds one JSON event per line, as many
// of each type as the summary counts.
func checkJSONLines(t *testing.T, stdout string, want kwatch.Summary) {
	t.Helper()
	counts := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
		var e kwatch.Event
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("stdout line %q is not a JSON event: %v", line, err)
		}
		if e.Type != kwatch.StateChanged {
			counts[e.Resource+" "+e.Type]++
		}
	}
	wantCounts := map[string]int{}
	for _, r := range want {
		for verb, n := range map[string]int{kwatch.Added: r.Added, kwatch.Modified: r.Modified, kwatch.Deleted: r.Deleted} {
			if n > 0 {
				wantCounts[r.Resource+" "+verb] = n
			}
		}
	}
	if diff := cmp.Diff(wantCounts, counts); diff != "" {
		t.Errorf("JSON events (-want +got):\n%s", diff)
	}
}

func TestBadOptions(t *testing.T) {
	tests := []struct {
		name    string
		opts    kwatch.Options
		wantErr string
	}{
		{name: "unknown output", opts: kwatch.Options{Output: "yaml"}, wantErr: `-o "yaml"`},
		{name: "negative duration", opts: kwatch.Options{Duration: -time.Second}, wantErr: "--duration"},
		{name: "missing kubeconfig", opts: kwatch.Options{Kubeconfig: "/nonexistent/kubeconfig", Resources: []string{"pods"}}, wantErr: "kubeconfig /nonexistent/kubeconfig"},
		{name: "negative demo objects", opts: kwatch.Options{DemoObjects: -1}, wantErr: "--demo-objects"},
		{name: "negative linger", opts: kwatch.Options{Linger: -time.Second}, wantErr: "--linger"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := kwatch.Run(context.Background(), tc.opts)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error = %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

// TestDurationEndsWithSummary watches named resources on the embedded
// server until --duration ends the watch: no error, and a summary.
func TestDurationEndsWithSummary(t *testing.T) {
	var out bytes.Buffer
	got, err := kwatch.Run(context.Background(), kwatch.Options{
		Resources: []string{"namespaces", "configmaps"}, Duration: 2 * time.Second, Out: &out, Testdata: testdata,
	})
	if err != nil {
		t.Fatalf("kwatch: %v\n%s", err, out.String())
	}
	// A fresh server has its four system namespaces and one ConfigMap,
	// kube-system/extension-apiserver-authentication, and nothing changes.
	want := kwatch.Summary{{Resource: "namespaces", Cached: 4, State: "Synced"}, {Resource: "configmaps", Cached: 1, State: "Synced"}}
	if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(kwatch.ResourceSummary{}, "SyncTime")); diff != "" {
		t.Errorf("summary (-want +got):\n%s\n%s", diff, out.String())
	}
	if diff := cmp.Diff(want, parseSummaryTable(t, out.String())); diff != "" {
		t.Errorf("printed summary (-want +got):\n%s", diff)
	}
}
