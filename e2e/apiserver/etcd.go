package apiserver

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
)

// etcdServer is a single-member etcd, in process, that keeps its data in a
// temporary directory and never syncs it to disk: it is never restarted.
type etcdServer struct {
	etcd *embed.Etcd
	dir  string
}

func startEtcd() (*etcdServer, error) {
	dir, err := os.MkdirTemp("", "generic-e2e-etcd")
	if err != nil {
		return nil, err
	}
	config, err := etcdConfig(dir)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	e, err := embed.StartEtcd(config)
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("start etcd: %w", err)
	}
	server := &etcdServer{etcd: e, dir: dir}
	select {
	case <-e.Server.ReadyNotify():
		return server, nil
	case err := <-e.Err():
		server.stop()
		return nil, fmt.Errorf("etcd: %w", err)
	case <-time.After(60 * time.Second):
		server.stop()
		return nil, fmt.Errorf("etcd did not start within a minute")
	}
}

// etcdConfig is etcd's test configuration, as client-go's
// k8s.io/apiserver/pkg/storage/etcd3/testserver.NewTestConfig makes it: free
// loopback ports, no fsync, only errors logged; and progress notifications
// every 5 s, as kubeadm's etcd has them.
func etcdConfig(dir string) (*embed.Config, error) {
	config := embed.NewConfig()
	config.Dir = dir
	config.UnsafeNoFsync = true
	ports, err := freePorts(2)
	if err != nil {
		return nil, err
	}
	client := url.URL{Scheme: "http", Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[0]))}
	peer := url.URL{Scheme: "http", Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[1]))}
	config.ListenClientUrls = []url.URL{client}
	config.AdvertiseClientUrls = []url.URL{client}
	config.ListenPeerUrls = []url.URL{peer}
	config.AdvertisePeerUrls = []url.URL{peer}
	config.InitialCluster = config.InitialClusterFromName(config.Name)
	config.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
	// As kubeadm sets it: etcd tells kube-apiserver's watch cache of its
	// progress every 5 s, so that the bookmarks of a resource nobody
	// writes carry a moving resourceVersion (etcd's default is 10 min).
	config.WatchProgressNotifyInterval = 5 * time.Second
	// etcd refuses every write once its database outgrows its quota (2
	// GiB by default: "mvcc: database space exceeded"), which the seed of
	// 100,000 realistic Pods, each written three times, did. 8 GiB, as
	// etcd's documentation suggests at most; the data stays on disk.
	config.QuotaBackendBytes = 8 << 30
	return config, nil
}

// endpoints returns the client URLs of the server.
func (s *etcdServer) endpoints() []string {
	var urls []string
	for _, u := range s.etcd.Config().ListenClientUrls {
		urls = append(urls, u.String())
	}
	return urls
}

func (s *etcdServer) stop() {
	s.etcd.Close()
	os.RemoveAll(s.dir)
}

// freePorts asks the kernel for count free loopback ports.
func freePorts(count int) ([]int, error) {
	ports := make([]int, 0, count)
	listeners := make([]net.Listener, 0, count)
	defer func() {
		for _, l := range listeners {
			l.Close()
		}
	}()
	for range count {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("find a free port: %w", err)
		}
		listeners = append(listeners, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
