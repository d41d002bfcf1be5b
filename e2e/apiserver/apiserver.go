package apiserver

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/client-go/rest"
	"k8s.io/ktesting"
	kubeapiservertesting "k8s.io/kubernetes/cmd/kube-apiserver/app/testing"
)

// Options configure a Server.
type Options struct {
	// Flags are extra kube-apiserver flags, for example
	// "--feature-gates=ShardedListAndWatch=false" or
	// "--authorization-mode=RBAC". They come after the defaults
	// (DefaultFlags) and win over them.
	Flags []string
}

// DefaultFlags are the kube-apiserver flags every Server gets: the
// ServiceAccount admission plugin is off, so that Pods can be created without
// a service account controller.
var DefaultFlags = []string{"--disable-admission-plugins=ServiceAccount"}

// Server is a running kube-apiserver and its etcd.
type Server struct {
	// Config reaches the API server as a cluster administrator
	// (system:masters); copy it before changing it.
	Config *rest.Config
	// Etcd is a client of the server's etcd, for what only etcd can do,
	// such as compaction (see CompactEtcd).
	Etcd *clientv3.Client

	stopOnce sync.Once
	stop     func()
}

// Start starts etcd and kube-apiserver for a program and returns once the
// API server serves, in about 3 seconds. Call Stop to shut the servers down.
//
// The context only bounds the start: if it is done before Start begins or
// by the time the servers are up, Start stops whatever it started and
// returns an error wrapping the context's cause. The start itself runs to
// its end (its own timeouts add up to two and a half minutes), because kube-apiserver's post-start
// hooks exit the process when their context ends while they run. Cancelling
// the context after Start has returned does nothing to the servers.
func Start(ctx context.Context, opts Options) (*Server, error) {
	if ctx.Err() != nil {
		return nil, fmt.Errorf("start kube-apiserver: %w", context.Cause(ctx))
	}
	tb := newProgramTB()
	// The servers get a context that is never cancelled (its values, such
	// as the logger, are ctx's): StartTestServer stops them when its
	// context ends, during the start (killing the process, see above) and,
	// in a window at its end, after.
	server, err := start(context.WithoutCancel(ctx), tb, opts)
	if err != nil {
		tb.cleanup()
		return nil, err
	}
	server.stop = chain(server.stop, tb.cleanup)
	if ctx.Err() != nil {
		server.Stop()
		return nil, fmt.Errorf("start kube-apiserver: %w", context.Cause(ctx))
	}
	return server, nil
}

// StartForTest starts etcd and kube-apiserver for a test or benchmark, with
// extra flags, and stops them when it ends (t.Cleanup). It fails t if they
// do not start.
func StartForTest(t testing.TB, flags ...string) *Server {
	t.Helper()
	server, err := start(context.Background(), t, Options{Flags: flags})
	if err != nil {
		t.Fatalf("start kube-apiserver: %v", err)
	}
	t.Cleanup(server.Stop)
	return server
}

// Stop shuts down kube-apiserver, then etcd, and removes their temporary
// directories. It may be called more than once.
func (s *Server) Stop() {
	s.stopOnce.Do(s.stop)
}

// CompactEtcd compacts etcd's history up to its current revision, so that a
// watch from any older resourceVersion fails with 410 Gone (when the API
// server does not serve it from its watch cache).
func (s *Server) CompactEtcd(ctx context.Context) (int64, error) {
	resp, err := s.Etcd.Get(ctx, "compact-probe")
	if err != nil {
		return 0, err
	}
	revision := resp.Header.Revision
	if _, err := s.Etcd.Compact(ctx, revision, clientv3.WithCompactPhysical()); err != nil {
		return 0, err
	}
	return revision, nil
}

func start(ctx context.Context, tb ktesting.TB, opts Options) (*Server, error) {
	etcd, err := startEtcd()
	if err != nil {
		return nil, err
	}
	storage := &storagebackend.Config{
		Type:      storagebackend.StorageTypeETCD3,
		Prefix:    "/registry",
		Transport: storagebackend.TransportConfig{ServerList: etcd.endpoints()},
	}
	flags := append(append([]string(nil), DefaultFlags...), opts.Flags...)
	result, err := startKubeAPIServer(ctx, tb, flags, storage)
	if err != nil {
		etcd.stop()
		return nil, err
	}
	return &Server{
		Config: result.ClientConfig,
		Etcd:   result.EtcdClient,
		stop:   chain(result.TearDownFn, etcd.stop),
	}, nil
}

// startKubeAPIServer runs StartTestServer in a goroutine of its own, so that
// a FailNow from it (runtime.Goexit) ends that goroutine, not the caller's.
func startKubeAPIServer(ctx context.Context, tb ktesting.TB, flags []string, storage *storagebackend.Config) (kubeapiservertesting.TestServer, error) {
	type outcome struct {
		server kubeapiservertesting.TestServer
		err    error
	}
	done := make(chan outcome, 1)
	go func() {
		finished := false
		defer func() {
			if !finished {
				done <- outcome{err: errors.New("kube-apiserver failed to start (see the log)")}
			}
		}()
		tCtx := ktesting.InitCtx(ctx, tb)
		instance := &kubeapiservertesting.TestServerInstanceOptions{EnableCertAuth: false, DisableInvariantChecks: true}
		server, err := kubeapiservertesting.StartTestServer(tCtx, instance, flags, storage)
		finished = true
		done <- outcome{server: server, err: err}
	}()
	got := <-done
	if got.err != nil {
		return got.server, fmt.Errorf("start kube-apiserver: %w", got.err)
	}
	return got.server, nil
}

// chain returns a function that calls each of fns in turn.
func chain(fns ...func()) func() {
	return func() {
		for _, fn := range fns {
			if fn != nil {
				fn()
			}
		}
	}
}
