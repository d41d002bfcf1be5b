// Package mutationtest runs a test in a child process with client-go's
// cache mutation detector on, for the tests that show a write into a
// cached object is caught.
//
// The detector (k8s.io/client-go/tools/cache, enabled by
// KUBE_CACHE_MUTATION_DETECTOR=true when the process starts) keeps a deep
// copy of every object a shared informer caches, compares them once a
// second, prints each that differs ("CACHE <type>[i] ALTERED!") and
// panics the process ("cache <type> modified"). A test watches that from
// outside: Run starts this test binary again, running one test, with the
// detector on and Case naming what the test is to play; the test, seeing
// Case, caches objects, writes into one, and calls AwaitDetector.
//
// It imports nothing of this module.
package mutationtest

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// caseVariable names the case a child process plays.
const caseVariable = "GENERIC_MUTATIONTEST_CASE"

// awaitFor is how long AwaitDetector waits: the detector compares once a
// second, so it has panicked long before on the most loaded machine.
const awaitFor = time.Minute

// Result is what the detector did in a child process.
type Result struct {
	// Altered is how many cached objects it reported altered.
	Altered int
	// Panicked: the process ended with the detector's panic.
	Panicked bool
}

// Case returns the name of the case a child process that Run started is
// to play; "" in any other process.
func Case() string { return os.Getenv(caseVariable) }

// AwaitDetector blocks for a minute, for the detector to panic the
// process; if it returns, the detector caught nothing.
func AwaitDetector() { time.Sleep(awaitFor) }

// Run runs test, the name of a test of this binary, in a child process
// with the detector on and Case returning name, and returns what the
// detector did. The child's output goes to t's log when the detector did
// not panic. It fails t if the child cannot start.
func Run(t testing.TB, test, name string) Result {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$", "-test.count=1")
	cmd.Env = append(os.Environ(), "KUBE_CACHE_MUTATION_DETECTOR=true", caseVariable+"="+name)
	out, err := cmd.CombinedOutput()
	var exited *exec.ExitError
	if err != nil && !errors.As(err, &exited) {
		t.Fatalf("mutationtest: running %s: %v", test, err)
	}
	text := string(out)
	result := Result{
		Altered:  strings.Count(text, "] ALTERED!"),
		Panicked: err != nil && strings.Contains(text, "panic: cache ") && strings.Contains(text, " modified"),
	}
	if !result.Panicked {
		t.Logf("mutationtest: %s (case %q) ended with %v:\n%s", test, name, err, text)
	}
	return result
}
