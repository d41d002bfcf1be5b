package main

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestSplitRuns reads raw output back into its runs, and refuses what
// would make a run's output ambiguous.
func TestSplitRuns(t *testing.T) {
	fixture, err := os.ReadFile("testdata/reuse_raw.txt")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		raw     string
		want    map[string]string // run -> library and output
		wantErr string
	}{
		{
			name: "two runs",
			raw:  string(fixture),
			want: map[string]string{
				"reads":       "a948ced-dirty\ngoos: linux\nBenchmarkReadGet/contender=generic-typed-2 \t 100\t 10 ns/op\nPASS\n",
				"growth-1000": "a948ced-dirty\ngoos: linux\nBenchmarkCacheSize/resource=pods/contender=generic-typed-2 \t 1\t 1 ns/op\t 15000 B/object\nPASS\n",
			},
		},
		{name: "empty", raw: "", want: map[string]string{}},
		{name: "output before any run", raw: "goos: linux\nbenchreport-run: reads\n", wantErr: "line 1: output before the first"},
		{name: "a run twice", raw: "benchreport-run: reads\nPASS\nbenchreport-run: reads\n", wantErr: `line 3: run "reads" appears twice`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			runs, err := splitRuns([]byte(tc.raw))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for name, o := range runs {
				got[name] = o.library + "\n" + string(o.output)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("runs (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRawRoundTrip: what raw writes, splitRuns reads back as it was.
func TestRawRoundTrip(t *testing.T) {
	in := []runOutput{
		{name: "reads", library: "abc", output: []byte("goos: linux\nPASS\n")},
		{name: "growth-100000", library: "def-dirty", output: []byte("BenchmarkX-2 1 1 ns/op\n")},
	}
	var raw []byte
	for _, o := range in {
		raw = append(raw, o.raw()...)
	}
	runs, err := splitRuns(raw)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]runOutput{"reads": in[0], "growth-100000": in[1]}
	if diff := cmp.Diff(want, runs, cmp.AllowUnexported(runOutput{})); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
}

// TestSourceGet: -only's runs run now, the others come from -reuse, and a
// run in neither is an error, not an empty result.
func TestSourceGet(t *testing.T) {
	reused := map[string]runOutput{"reads": {name: "reads", library: "old", output: []byte("old output\n")}}
	src := source{only: regexp.MustCompile("^growth-"), reused: reused}
	for _, tc := range []struct {
		name       string
		wantRan    bool
		wantReused bool
		wantOutput string
		wantErr    string
	}{
		{name: "growth-100000", wantRan: true, wantOutput: "new output\n"},
		{name: "reads", wantReused: true, wantOutput: "old output\n"},
		{name: "sync", wantErr: "sync: not in -only, and not in the -reuse output"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ran := false
			o, reused, err := src.get(tc.name, func() ([]byte, error) { ran = true; return []byte("new output\n"), nil })
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := struct {
				Ran, Reused bool
				Output      string
			}{ran, reused, string(o.output)}
			want := struct {
				Ran, Reused bool
				Output      string
			}{tc.wantRan, tc.wantReused, tc.wantOutput}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("get (-want +got):\n%s", diff)
			}
		})
	}
}

// TestNewSourceErrors: -reuse without -only, a bad -only and an unreadable
// -reuse are refused before anything runs.
func TestNewSourceErrors(t *testing.T) {
	for _, tc := range []struct {
		name, only, reuse, wantErr string
	}{
		{"reuse without only", "", "testdata/reuse_raw.txt", "-reuse needs -only"},
		{"bad only", "(", "", "-only: error parsing regexp"},
		{"missing reuse", "^growth-", "testdata/no-such-file.txt", "-reuse: open testdata/no-such-file.txt"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := newSource(tc.only, tc.reuse)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("error %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

// TestReusedRunsListed: a report that reused runs names them, and the
// library's version each measured, near its top.
func TestReusedRunsListed(t *testing.T) {
	r := &report{objects: 10, count: 1, results: map[string][]result{}, benchstat: map[string]string{},
		reused: []runOutput{{name: "reads", library: "a948ced-dirty"}}}
	md, err := r.markdown()
	if err != nil {
		t.Fatal(err)
	}
	head, _, _ := strings.Cut(string(md), "## Targets")
	for _, want := range []string{"for the runs made now", "\n- reads: a948ced-dirty\n"} {
		if !strings.Contains(head, want) {
			t.Errorf("no %q before the targets:\n%s", want, head)
		}
	}
}
