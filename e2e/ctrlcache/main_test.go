package ctrlcache

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/go-logr/logr"
	crlog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/generic-informers/generic/e2e/apiserver"
)

// server is the API server every test of the package shares; each test
// works in namespaces of its own.
var server *apiserver.Server

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	// The managers' and controllers' logs (controller-runtime warns, with a
	// stack, when no logger was ever set).
	crlog.SetLogger(logr.Discard())
	s, err := apiserver.Start(context.Background(), apiserver.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer s.Stop()
	server = s
	return m.Run()
}
