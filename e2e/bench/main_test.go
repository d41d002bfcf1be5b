package bench

import (
	"fmt"
	"os"
	"strconv"
	"testing"
)

// objects is the benchmark size: BENCH_OBJECTS, or 10000.
var objects = 10000

func TestMain(m *testing.M) {
	if v := os.Getenv("BENCH_OBJECTS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 100 {
			fmt.Fprintf(os.Stderr, "BENCH_OBJECTS=%q: want a number of at least 100\n", v)
			os.Exit(2)
		}
		objects = n
	}
	code := m.Run()
	stopServer()
	os.Exit(code)
}
