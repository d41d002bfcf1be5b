package integration

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/generic-informers/generic/e2e/apiserver"
)

// shared is the API server most tests use; each test works in namespaces of
// its own. Tests that change the server's shape (a loosened CRD, a disabled
// watch cache) start their own.
var shared *apiserver.Server

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	server, err := apiserver.Start(context.Background(), apiserver.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer server.Stop()
	shared = server
	return m.Run()
}
