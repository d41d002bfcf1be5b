package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strconv"
)

// group is one `go test -bench` run of e2e/bench.
type group struct {
	name, pattern, benchtime string
	// maxCount, if not 0, caps the group's -count: for a benchmark too
	// long to run as many times as the others.
	maxCount int
	// env is added to the benchmark process's environment.
	env []string
}

// count is the group's -count where the report's is count.
func (g group) count(count int) int {
	if g.maxCount > 0 {
		return min(count, g.maxCount)
	}
	return count
}

// run runs the group's benchmarks count times (the caller passes
// g.count's) at objects objects and returns their output.
func (g group) run(objects, count int) ([]byte, error) {
	cmd := exec.Command("go", "test", "./bench", "-run", "^$", "-bench", g.pattern,
		"-benchtime", g.benchtime, "-count", strconv.Itoa(count), "-benchmem", "-timeout", "60m")
	cmd.Env = append(append(os.Environ(), g.env...), "BENCH_OBJECTS="+strconv.Itoa(objects))
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%s: %w\n%s", g.name, err, out.String())
	}
	return out.Bytes(), nil
}

// benchstat runs benchstat on output, one column per contender.
func benchstat(output []byte) (string, error) {
	f, err := os.CreateTemp("", "benchreport-*.txt")
	if err != nil {
		return "", err
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(output); err != nil {
		return "", err
	}
	f.Close()
	out, err := exec.Command("go", "tool", "benchstat", "-col", "/contender", f.Name()).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("benchstat: %w\n%s", err, out)
	}
	return string(out), nil
}
