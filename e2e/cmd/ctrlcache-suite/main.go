// Command ctrlcache-suite is hack/ctrlcache-suite.sh's helper for running
// controller-runtime's own pkg/cache test suite on this project's embedded
// API server, against controller-runtime's cache or this project's
// ctrlcache.New.
//
//	ctrlcache-suite rewrite DIR
//	ctrlcache-suite report -mode MODE -dir DIR -go-json FILE -ginkgo-json FILE
//
// rewrite edits the test files of package cache_test in DIR (a copy of
// controller-runtime's pkg/cache): each reference to controller-runtime's
// cache.New, a call or a function value, becomes ctrlcache.New, and the file
// imports github.com/generic-informers/generic/ctrlcache. Files of package
// cache (tests of controller-runtime's unexported code) are left alone.
//
// report reads the suite's `go test -json` output and Ginkgo JSON report and
// prints the counts: Ginkgo specs ran, passed, failed, skipped and pending,
// and plain Go tests passed and failed, each for package cache_test (the
// cache.Cache contract) and package cache (controller-runtime's internals)
// apart, then every failure. It exits 1 if anything failed or nothing ran.
//
// Exit status: 0 on success, 1 on failure, 2 on bad usage.
package main

import (
	"fmt"
	"io"
	"os"
)

func main() {
	os.Exit(mainStatus(os.Args[1:], os.Stdout, os.Stderr))
}

const usage = `usage:
  ctrlcache-suite rewrite DIR
  ctrlcache-suite report -mode controller-runtime|ctrlcache -dir DIR -go-json FILE -ginkgo-json FILE
`

// mainStatus runs the subcommand of args and returns the exit status.
func mainStatus(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "rewrite":
		if len(args) != 2 {
			fmt.Fprint(stderr, usage)
			return 2
		}
		if _, err := rewriteDir(args[1], stdout); err != nil {
			fmt.Fprintln(stderr, "ctrlcache-suite rewrite:", err)
			return 1
		}
		return 0
	case "report":
		return reportMain(args[1:], stdout, stderr)
	default:
		fmt.Fprintf(stderr, "ctrlcache-suite: unknown subcommand %q\n%s", args[0], usage)
		return 2
	}
}
