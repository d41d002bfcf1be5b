package main

import (
	"bufio"
	"bytes"
	"fmt"
	"regexp"
	"strings"
)

// The raw output (docs/benchmarks/raw.txt) is the output of every run in
// turn, each after two lines of benchfmt configuration that name it and
// the library's version it measured:
//
//	benchreport-run: growth-100000
//	benchreport-library: a70185a
//
// -reuse reads such a file back, so that a report can rerun some runs
// (-only) and take the others from an earlier run of the same machine: a
// run of the whole set takes an hour and a half, and one run that failed
// (the 100,000-Pod growth point, which needed a memory limit) should not
// cost the rest.

const (
	runKey     = "benchreport-run"
	libraryKey = "benchreport-library"
)

// runOutput is one run's output, as the raw output keeps it.
type runOutput struct {
	name, library string
	output        []byte
}

// raw is the runOutput as raw.txt holds it.
func (o runOutput) raw() []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s: %s\n%s: %s\n", runKey, o.name, libraryKey, o.library)
	b.Write(o.output)
	return b.Bytes()
}

// splitRuns reads raw output back into its runs, by name. Lines before the
// first benchreport-run line are an error: they belong to no run.
func splitRuns(raw []byte) (map[string]runOutput, error) {
	runs := map[string]runOutput{}
	var current *runOutput
	flush := func() {
		if current != nil {
			runs[current.name] = *current
		}
	}
	scanner := bufio.NewScanner(bytes.NewReader(raw))
	scanner.Buffer(nil, 1<<20)
	for line := 1; scanner.Scan(); line++ {
		text := scanner.Text()
		if name, ok := strings.CutPrefix(text, runKey+": "); ok {
			flush()
			if _, seen := runs[name]; seen {
				return nil, fmt.Errorf("line %d: run %q appears twice", line, name)
			}
			current = &runOutput{name: name}
			continue
		}
		if current == nil {
			if strings.TrimSpace(text) == "" {
				continue
			}
			return nil, fmt.Errorf("line %d: output before the first %q line", line, runKey+":")
		}
		if library, ok := strings.CutPrefix(text, libraryKey+": "); ok && len(current.output) == 0 {
			current.library = library
			continue
		}
		current.output = append(append(current.output, text...), '\n')
	}
	if err := scanner.Err(); err != nil {
		return nil, err
	}
	flush()
	return runs, nil
}

// source says, for each run, whether it runs now or is taken from an
// earlier run's output.
type source struct {
	only   *regexp.Regexp       // the runs to run now; nil: all
	reused map[string]runOutput // the earlier runs, by name
}

// get returns the output of the run name: run's, if name is to run now,
// or the earlier run's. It reports whether the output was reused.
func (s source) get(name string, run func() ([]byte, error)) (runOutput, bool, error) {
	if s.only == nil || s.only.MatchString(name) {
		output, err := run()
		return runOutput{name: name, library: libraryVersion(), output: output}, false, err
	}
	if o, ok := s.reused[name]; ok {
		return o, true, nil
	}
	return runOutput{}, false, fmt.Errorf("%s: not in -only, and not in the -reuse output", name)
}
