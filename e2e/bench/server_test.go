package bench

import (
	"context"
	"sync"
	"testing"

	"github.com/generic-informers/generic/e2e/apiserver"
)

var (
	serverOnce sync.Once
	server     *apiserver.Server
	serverErr  error
)

// sharedServer starts the embedded API server on first use.
func sharedServer(b *testing.B) *apiserver.Server {
	b.Helper()
	serverOnce.Do(func() {
		server, serverErr = apiserver.Start(context.Background(), apiserver.Options{})
	})
	if serverErr != nil {
		b.Fatal(serverErr)
	}
	return server
}

func stopServer() {
	if server != nil {
		server.Stop()
	}
}
