package apiserver_test

import (
	"context"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/generic-informers/generic/e2e/apiserver"
)

// tempEntries lists what the servers leave in the temp dir, by the prefixes
// etcd (ours) and StartTestServer use.
func tempEntries(t *testing.T) []string {
	t.Helper()
	var found []string
	for _, pattern := range []string{"generic-e2e*", "kubernetes-kube-apiserver*", "insecure_test_key*"} {
		matches, err := filepath.Glob(filepath.Join(os.TempDir(), pattern))
		if err != nil {
			t.Fatal(err)
		}
		found = append(found, matches...)
	}
	return found
}

// TestStopLeavesNothingBehind starts and stops a server from a program, twice,
// and checks that no goroutine, listening port or temp dir outlives Stop.
func TestStopLeavesNothingBehind(t *testing.T) {
	// A temp dir of this test's own, so that servers of other test
	// processes running at the same time do not show up in it.
	t.Setenv("TMPDIR", t.TempDir())
	// The first server starts what k8s.io/apiserver starts once per process
	// and never stops (LogHealthz's klog flusher, a sync.Once on a package
	// variable); from then on, each server must leave nothing behind.
	startAndStop(t)
	goroutinesBefore := goleak.IgnoreCurrent()
	startAndStop(t)
	// goleak.Find waits about 2 s for goroutines to end; a busy machine
	// (the other e2e packages run at the same time) may need longer.
	var err error
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); {
		if err = goleak.Find(goroutinesBefore); err == nil {
			break
		}
	}
	if err != nil {
		t.Errorf("goroutines left after Stop: %v", err)
	}
}

func startAndStop(t *testing.T) {
	tempBefore := tempEntries(t)
	server, err := apiserver.Start(context.Background(), apiserver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	host, err := url.Parse(server.Config.Host)
	if err != nil {
		t.Fatal(err)
	}
	etcdEndpoints := server.Etcd.Endpoints()
	server.Stop()
	server.Stop() // twice is fine

	for _, address := range append([]string{host.Host}, hostsOf(t, etcdEndpoints)...) {
		if conn, err := net.DialTimeout("tcp", address, time.Second); err == nil {
			conn.Close()
			t.Errorf("%s still accepts connections after Stop", address)
		}
	}
	if diff := cmp.Diff(tempBefore, tempEntries(t)); diff != "" {
		t.Errorf("temp entries (-before +after):\n%s", diff)
	}
}

func hostsOf(t *testing.T, endpoints []string) []string {
	var hosts []string
	for _, endpoint := range endpoints {
		u, err := url.Parse(endpoint)
		if err != nil {
			t.Fatal(err)
		}
		hosts = append(hosts, u.Host)
	}
	return hosts
}
