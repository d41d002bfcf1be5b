package ctrlcache

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/generic-informers/generic/e2e/apiserver"
)

// server is the API server every test of the package shares; each test
// works in namespaces of its own.
var server *apiserver.Server

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	s, err := apiserver.Start(context.Background(), apiserver.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer s.Stop()
	server = s
	return m.Run()
}
