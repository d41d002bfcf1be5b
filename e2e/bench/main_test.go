package bench

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"testing"

	"k8s.io/klog/v2"
)

// objects is the benchmark size: BENCH_OBJECTS, or 10000.
var objects = 10000

func TestMain(m *testing.M) {
	if v := os.Getenv("BENCH_OBJECTS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < nodes {
			fmt.Fprintf(os.Stderr, "BENCH_OBJECTS=%q: want a number of at least 500\n", v)
			os.Exit(2)
		}
		objects = n
	}
	quietKlog()
	code := m.Run()
	stopServer()
	os.Exit(code)
}

// quietKlog keeps the embedded API server's and the clients' logs out of
// the benchmark output.
func quietKlog() {
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	_ = fs.Set("logtostderr", "false")
	_ = fs.Set("alsologtostderr", "false")
	_ = fs.Set("stderrthreshold", "FATAL")
	klog.SetOutput(io.Discard)
}
