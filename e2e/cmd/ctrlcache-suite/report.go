package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// goTestEvent is one line of `go test -json` (cmd/test2json's TestEvent).
type goTestEvent struct {
	Action string
	Test   string
	Output string
}

// ginkgoReport is the part of a Ginkgo JSON report (types.Report) the
// summary needs.
type ginkgoReport struct {
	SuiteDescription string
	SuiteSucceeded   bool
	SpecReports      []specReport
}

type specReport struct {
	ContainerHierarchyTexts []string
	LeafNodeType            string
	LeafNodeText            string
	LeafNodeLocation        codeLocation
	State                   string
	Failure                 *struct {
		Message  string
		Location codeLocation
	}
}

type codeLocation struct {
	FileName   string
	LineNumber int
}

// specCounts are the Ginkgo specs (It nodes) of one package by outcome.
type specCounts struct {
	total, passed, failed, skipped, pending int
}

func (c specCounts) ran() int { return c.total - c.skipped - c.pending }

// testCounts are the plain Go tests of one package by outcome.
type testCounts struct {
	passed, failed []string
}

// summary is the outcome of one run of the suite.
type summary struct {
	specs    map[string]*specCounts
	tests    map[string]*testCounts
	failures []string
	// suiteRan says whether the Ginkgo suite left a report.
	suiteRan bool
	// output is go test's output outside any test, such as build errors.
	output []string
}

// failedStates are Ginkgo's failure states (types.SpecStateFailureStates).
var failedStates = []string{"failed", "panicked", "timedout", "interrupted", "aborted"}

func reportMain(args []string, stdout, stderr io.Writer) int {
	fset := flag.NewFlagSet("ctrlcache-suite report", flag.ContinueOnError)
	fset.SetOutput(stderr)
	mode := fset.String("mode", "", "controller-runtime or ctrlcache: which cache cache.New was")
	dir := fset.String("dir", "", "the suite's package directory (controller-runtime's pkg/cache, as run)")
	goJSON := fset.String("go-json", "", "the suite's `go test -json` output")
	ginkgoJSON := fset.String("ginkgo-json", "", "the suite's Ginkgo JSON report (-ginkgo.json-report)")
	if err := fset.Parse(args); err != nil {
		return 2
	}
	if *mode != "controller-runtime" && *mode != "ctrlcache" || *dir == "" || *goJSON == "" || *ginkgoJSON == "" || fset.NArg() > 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	s, err := summarize(*dir, *goJSON, *ginkgoJSON)
	if err != nil {
		fmt.Fprintln(stderr, "ctrlcache-suite report:", err)
		return 1
	}
	s.write(stdout, *mode)
	if !s.passed() {
		return 1
	}
	return 0
}

// summarize reads the suite's outputs and counts its outcomes by package.
func summarize(dir, goJSON, ginkgoJSON string) (*summary, error) {
	files, err := readTestFiles(dir)
	if err != nil {
		return nil, err
	}
	s := &summary{specs: map[string]*specCounts{}, tests: map[string]*testCounts{}}
	for _, tf := range files {
		s.specs[tf.pkg] = &specCounts{}
		s.tests[tf.pkg] = &testCounts{}
	}
	if err := s.addGoTest(goJSON, files); err != nil {
		return nil, err
	}
	if err := s.addGinkgo(ginkgoJSON, files); err != nil {
		return nil, err
	}
	return s, nil
}

// addGoTest counts the plain tests' outcomes from go test's JSON events:
// top-level tests only, the Ginkgo runner left out (its specs are counted
// from the Ginkgo report).
func (s *summary) addGoTest(path string, files map[string]testFile) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	pkgOf := map[string]string{}
	runners := map[string]bool{}
	for _, tf := range files {
		for _, name := range tf.tests {
			pkgOf[name] = tf.pkg
		}
		for _, name := range tf.specRunners {
			runners[name] = true
		}
	}
	scanner := bufio.NewScanner(f)
	scanner.Buffer(make([]byte, 1<<20), 64<<20)
	for scanner.Scan() {
		var e goTestEvent
		if json.Unmarshal(scanner.Bytes(), &e) != nil {
			s.output = append(s.output, scanner.Text()) // not JSON: go's own error
			continue
		}
		switch {
		case e.Test == "" && (e.Action == "output" || e.Action == "build-output"):
			s.output = append(s.output, strings.TrimRight(e.Output, "\n"))
		case e.Test == "" || strings.Contains(e.Test, "/") || runners[e.Test]:
		case e.Action == "pass" || e.Action == "fail":
			pkg, ok := pkgOf[e.Test]
			if !ok {
				return fmt.Errorf("%s: test %s is in no test file of the suite", path, e.Test)
			}
			counts := s.tests[pkg]
			if e.Action == "pass" {
				counts.passed = append(counts.passed, e.Test)
			} else {
				counts.failed = append(counts.failed, e.Test)
				s.failures = append(s.failures, fmt.Sprintf("Go test %s (package %s) failed", e.Test, pkg))
			}
		}
	}
	return scanner.Err()
}

// addGinkgo counts the specs' outcomes from the Ginkgo JSON report, by the
// package of the file that holds each spec. A missing report means the
// suite did not run (it did not build, or go test stopped first).
func (s *summary) addGinkgo(path string, files map[string]testFile) error {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var reports []ginkgoReport
	if err := json.Unmarshal(data, &reports); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	s.suiteRan = len(reports) > 0
	for _, report := range reports {
		for _, spec := range report.SpecReports {
			if err := s.addSpec(spec, files); err != nil {
				return err
			}
		}
	}
	return nil
}

func (s *summary) addSpec(spec specReport, files map[string]testFile) error {
	failed := slices.Contains(failedStates, spec.State)
	if failed {
		s.failures = append(s.failures, spec.failure())
	}
	if spec.LeafNodeType != "It" {
		return nil // BeforeSuite and the like: only their failures count
	}
	tf, ok := files[filepath.Base(spec.LeafNodeLocation.FileName)]
	if !ok {
		return fmt.Errorf("spec %q is in %s, no test file of the suite", spec.LeafNodeText, spec.LeafNodeLocation.FileName)
	}
	counts := s.specs[tf.pkg]
	counts.total++
	switch {
	case failed:
		counts.failed++
	case spec.State == "passed":
		counts.passed++
	case spec.State == "skipped":
		counts.skipped++
	case spec.State == "pending":
		counts.pending++
	default:
		return fmt.Errorf("spec %q: unknown state %q", spec.LeafNodeText, spec.State)
	}
	return nil
}

func (spec specReport) failure() string {
	text := strings.Join(append(slices.Clone(spec.ContainerHierarchyTexts), spec.LeafNodeText), " ")
	if spec.LeafNodeType != "It" {
		text = spec.LeafNodeType + " " + text
	}
	where := fmt.Sprintf("%s:%d", filepath.Base(spec.LeafNodeLocation.FileName), spec.LeafNodeLocation.LineNumber)
	msg := ""
	if spec.Failure != nil {
		where = fmt.Sprintf("%s:%d", filepath.Base(spec.Failure.Location.FileName), spec.Failure.Location.LineNumber)
		msg = "\n      " + strings.ReplaceAll(strings.TrimSpace(spec.Failure.Message), "\n", "\n      ")
	}
	return fmt.Sprintf("Ginkgo spec %s: %s [%s]%s", spec.State, strings.TrimSpace(text), where, msg)
}

// passed says whether the run passed: the suite ran, at least one spec and
// one plain test passed, and nothing failed.
func (s *summary) passed() bool {
	passedSpecs, passedTests := 0, 0
	for _, c := range s.specs {
		passedSpecs += c.passed
	}
	for _, c := range s.tests {
		passedTests += len(c.passed)
	}
	return s.suiteRan && len(s.failures) == 0 && passedSpecs > 0 && passedTests > 0
}
