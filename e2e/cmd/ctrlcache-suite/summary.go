package main

import (
	"fmt"
	"io"
	"strings"
)

// packageRoles say what each package's tests exercise, by mode.
var packageRoles = map[string]map[string]string{
	"ctrlcache": {
		externalTests: "the cache.Cache contract, through ctrlcache.New",
		"cache":       "controller-runtime's internals, on its own cache",
	},
	"controller-runtime": {
		externalTests: "the cache.Cache contract, through controller-runtime's cache.New",
		"cache":       "controller-runtime's internals",
	},
}

// write prints the summary: specs and plain tests per package, their sums,
// then every failure (and, if the suite did not run, go test's output).
func (s *summary) write(w io.Writer, mode string) {
	var all specCounts
	var allPassed, allFailed int
	fmt.Fprintf(w, "controller-runtime's pkg/cache suite, mode %s:\n", mode)
	for _, pkg := range []string{externalTests, "cache"} {
		c, t := s.specs[pkg], s.tests[pkg]
		if c == nil || t == nil {
			continue
		}
		role := packageRoles[mode][pkg]
		fmt.Fprintf(w, "  package %s (%s):\n", pkg, role)
		fmt.Fprintf(w, "    Ginkgo specs: %s\n", c)
		fmt.Fprintf(w, "    Go tests:     %s\n", t)
		all.total += c.total
		all.passed += c.passed
		all.failed += c.failed
		all.skipped += c.skipped
		all.pending += c.pending
		allPassed += len(t.passed)
		allFailed += len(t.failed)
	}
	fmt.Fprintf(w, "  in all: Ginkgo specs %s; Go tests %d passed, %d failed\n", all, allPassed, allFailed)
	if !s.suiteRan {
		fmt.Fprintln(w, "  the Ginkgo suite did not run (no Ginkgo report); go test said:")
		for _, line := range s.output {
			fmt.Fprintln(w, "    "+line)
		}
	}
	if len(s.failures) > 0 {
		fmt.Fprintf(w, "  %d failures:\n", len(s.failures))
		for _, f := range s.failures {
			fmt.Fprintln(w, "    "+f)
		}
	}
	if s.passed() {
		fmt.Fprintln(w, "PASS")
	} else {
		fmt.Fprintln(w, "FAIL")
	}
}

func (c specCounts) String() string {
	return fmt.Sprintf("%d ran of %d, %d passed, %d failed, %d skipped, %d pending", c.ran(), c.total, c.passed, c.failed, c.skipped, c.pending)
}

func (t *testCounts) String() string {
	s := fmt.Sprintf("%d passed, %d failed", len(t.passed), len(t.failed))
	if len(t.passed)+len(t.failed) > 0 && len(t.passed)+len(t.failed) <= 4 {
		s += " (" + strings.Join(append(append([]string(nil), t.passed...), t.failed...), ", ") + ")"
	}
	return s
}
