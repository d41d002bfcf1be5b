package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	clientfeatures "k8s.io/client-go/features"
	clientfeaturestesting "k8s.io/client-go/features/testing"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/generic-informers/generic/internal/heaptest"
)

// The live heap a synced cache holds is measured in a process of its own
// (heapInChild): this benchmark binary, re-executed to run only
// BenchmarkSyncHeapChild, which connects to the parent's embedded API
// server, measures the live heap after forced collections with nothing but
// a warm client live (the baseline), syncs one informer, and measures again.
// It also times that sync: the client in a process of its own, without the
// server's garbage collections (at 100,000 objects the embedded server's
// live heap is about 1.5 GB, and every collection during a sync in its
// process marks it all). The server, in the parent, still shares the CPUs.
//
// Measured in the benchmark's own process, as before, the difference of two
// live heaps also counted whatever else changed between them: the embedded
// kube-apiserver and etcd run in that process, and their watch cache, the
// cached encodings of list responses, etcd's buffers and the previous
// contenders' leftovers grow and shrink by more than a cache of 100,000
// ConfigMaps holds. At that size a first run reported 0 B/object for one
// contender (the server freed more than the informer kept) and 3x the
// 10,000-object figure for another (the server's caches grew during its
// sync). In a process of its own, the only thing that changes between the
// two measures is the informer.

// heapChildEnv names the environment variable that carries a heapRequest
// to the child.
const heapChildEnv = "GENERIC_BENCH_HEAP_CHILD"

// heapProfileEnv names the environment variable that, set to a
// directory, has each child write there the heap profile of its synced
// cache (pprof's inuse_space, every allocation sampled):
// heap-<resource>-watchlist=<on|off>-<contender>.pb.gz (BenchmarkCacheSize's
// prefixed with cachesize-bench-set-<set>-), for `go tool pprof
// -sample_index=inuse_space`. Sampling every allocation slows the sync:
// alone-ns/op is not a measure with it set.
const heapProfileEnv = "GENERIC_BENCH_HEAP_PROFILE"

// heapResultPrefix starts the child's line of output that carries its
// heapResult.
const heapResultPrefix = "heap-child-result: "

// heapRequest is what the child measures, and how it reaches the server.
// With a Selector, the contender is one of BenchmarkCacheSize's
// (cacheSizeContenders), limited to the objects the label selector
// selects; without, one of BenchmarkSync's (syncContenders).
type heapRequest struct {
	Contender string
	Resource  schema.GroupVersionResource
	WatchList bool
	Selector  string `json:",omitempty"`
	Server    serverAddress
}

// serverAddress is the part of a rest.Config the child needs (a rest.Config
// has func fields, which encoding/json refuses).
type serverAddress struct {
	Host, APIPath, BearerToken, Username, Password string
	TLS                                            rest.TLSClientConfig
	QPS                                            float32
	Burst                                          int
}

func addressOf(config *rest.Config) serverAddress {
	return serverAddress{
		Host: config.Host, APIPath: config.APIPath, BearerToken: config.BearerToken,
		Username: config.Username, Password: config.Password,
		TLS: config.TLSClientConfig, QPS: config.QPS, Burst: config.Burst,
	}
}

func (a serverAddress) config() *rest.Config {
	return &rest.Config{
		Host: a.Host, APIPath: a.APIPath, BearerToken: a.BearerToken,
		Username: a.Username, Password: a.Password,
		TLSClientConfig: a.TLS, QPS: a.QPS, Burst: a.Burst,
	}
}

// heapResult is the child's measure: live heap before and after the sync,
// the highest heap sampled during it (peakSampler), the time the sync
// took, in nanoseconds, the CPU time the child spent on it (user and
// system, all its threads, its garbage collection included), and the
// allocations made during it (runtime.MemStats' Mallocs and TotalAlloc,
// their count and bytes).
type heapResult struct {
	Before, After, Peak uint64
	SyncNanos, CPUNanos int64
	Mallocs, AllocBytes uint64
}

// childMeasure is what heapInChild measured, in a process that holds
// nothing else (no API server, etcd, or other contender): the live heap
// contender's synced cache holds, in bytes, the highest heap the sync
// held beyond the same baseline (garbage included), the time it took to
// sync, and
// the allocations the client made to sync (their count and bytes). The
// benchmark's own allocs/op and B/op count the embedded API server's too:
// it runs in the benchmark's process.
type childMeasure struct {
	heap, peak    uint64
	sync, cpu     time.Duration
	allocs, bytes uint64
}

// heapInChild measures, in a child process, the live heap that contender's
// synced cache of gvr holds, the time it took to sync, and the allocations
// the client made to sync (the child's first sync: the client's one-time
// set-up, a few allocations an object at 1,000 objects, counts too).
func heapInChild(b *testing.B, config *rest.Config, gvr schema.GroupVersionResource, contender string) childMeasure {
	b.Helper()
	return runHeapChild(b, heapRequest{
		Contender: contender, Resource: gvr,
		WatchList: clientfeatures.FeatureGates().Enabled(clientfeatures.WatchListClient),
		Server:    addressOf(config),
	})
}

// runHeapChild runs BenchmarkSyncHeapChild in a child process for request
// and returns what it measured.
func runHeapChild(b *testing.B, req heapRequest) childMeasure {
	b.Helper()
	contender := req.Contender
	request, err := json.Marshal(req)
	if err != nil {
		b.Fatal(err)
	}
	executable, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(executable, "-test.run=^$", "-test.bench=^BenchmarkSyncHeapChild$", "-test.benchtime=1x", "-test.count=1")
	cmd.Env = append(childEnviron(os.Environ()), heapChildEnv+"="+string(request))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		b.Fatalf("heap child for %s: %v\n%s%s", contender, err, stdout.String(), stderr.String())
	}
	result, err := parseHeapResult(stdout.String())
	if err != nil {
		b.Fatalf("heap child for %s: %v\n%s", contender, err, stdout.String())
	}
	measure := childMeasure{sync: time.Duration(result.SyncNanos), cpu: time.Duration(result.CPUNanos), allocs: result.Mallocs, bytes: result.AllocBytes}
	if result.After > result.Before {
		measure.heap = result.After - result.Before
	}
	if result.Peak > result.Before {
		measure.peak = result.Peak - result.Before
	}
	return measure
}

// childMemoryLimitEnv names the environment variable that, if set, is the
// children's GOMEMLIMIT in place of the benchmark process's. benchreport's
// growth run gives the benchmark process a limit of its own: at 100,000
// realistic Pods its API server and etcd hold a live heap of 7 to 10 GB,
// which GOGC alone lets grow to twice that, more than the machine has
// beside a child's cache.
const childMemoryLimitEnv = "BENCH_CHILD_GOMEMLIMIT"

// childEnviron is environ with GOMEMLIMIT replaced by childMemoryLimitEnv's
// value, if it is set.
func childEnviron(environ []string) []string {
	limit, ok := "", false
	for _, kv := range environ {
		if v, found := strings.CutPrefix(kv, childMemoryLimitEnv+"="); found {
			limit, ok = v, true
		}
	}
	if !ok {
		return environ
	}
	out := make([]string, 0, len(environ)+1)
	for _, kv := range environ {
		if !strings.HasPrefix(kv, "GOMEMLIMIT=") {
			out = append(out, kv)
		}
	}
	return append(out, "GOMEMLIMIT="+limit)
}

// processCPU is the CPU time this process has used so far, user and
// system, all its threads.
func processCPU(b *testing.B) time.Duration {
	var usage syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &usage); err != nil {
		b.Fatal(err)
	}
	return time.Duration(usage.Utime.Nano() + usage.Stime.Nano())
}

func parseHeapResult(out string) (heapResult, error) {
	scanner := bufio.NewScanner(strings.NewReader(out))
	for scanner.Scan() {
		if line, ok := strings.CutPrefix(scanner.Text(), heapResultPrefix); ok {
			var result heapResult
			err := json.Unmarshal([]byte(line), &result)
			return result, err
		}
	}
	return heapResult{}, fmt.Errorf("no line %q in the output", heapResultPrefix)
}

// BenchmarkSyncHeapChild is the child of heapInChild; without its request in
// the environment it does nothing (it is not a benchmark of its own).
func BenchmarkSyncHeapChild(b *testing.B) {
	raw := os.Getenv(heapChildEnv)
	if raw == "" {
		b.Skip("run by heapInChild only")
	}
	var request heapRequest
	if err := json.Unmarshal([]byte(raw), &request); err != nil {
		b.Fatal(err)
	}
	run := childSyncer(request)
	if run == nil {
		b.Fatalf("no contender %q", request.Contender)
	}
	clientfeaturestesting.SetFeatureDuringTest(b, clientfeatures.WatchListClient, request.WatchList)
	var err error
	if scheme, err = newScheme(); err != nil {
		b.Fatal(err)
	}
	config := request.Server.config()
	profileDir := os.Getenv(heapProfileEnv)
	if profileDir != "" {
		runtime.MemProfileRate = 1
	}
	// The client's shared machinery (client-go's cached TLS transport, its
	// connection to the server) is made before the baseline, as in a
	// process that has clients already: the measure is the cache's.
	if _, err := kubernetes.NewForConfigOrDie(config).Discovery().ServerVersion(); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		before := heaptest.Live()
		var startStats, syncedStats runtime.MemStats
		runtime.ReadMemStats(&startStats)
		cpuStarted := processCPU(b)
		sampler := samplePeak()
		started := time.Now()
		synced, stop := run(b, context.Background(), config, request.Resource)
		waitSynced(b, synced)
		took := time.Since(started)
		peak := sampler.Stop()
		cpu := processCPU(b) - cpuStarted
		runtime.ReadMemStats(&syncedStats)
		after := heaptest.Live()
		if profileDir != "" {
			writeHeapProfile(b, profileDir, request)
		}
		runtime.KeepAlive(synced)
		result, err := json.Marshal(heapResult{
			Before: before, After: after, Peak: peak, SyncNanos: took.Nanoseconds(), CPUNanos: cpu.Nanoseconds(),
			Mallocs:    syncedStats.Mallocs - startStats.Mallocs,
			AllocBytes: syncedStats.TotalAlloc - startStats.TotalAlloc,
		})
		if err != nil {
			b.Fatal(err)
		}
		fmt.Println(heapResultPrefix + string(result))
		stop()
	}
}

// childSyncer returns the syncer of request's contender (see heapRequest),
// or nil if there is none of that name.
func childSyncer(request heapRequest) syncer {
	if request.Selector != "" {
		for _, c := range cacheSizeContenders {
			if c.name == request.Contender {
				return c.run(request.Selector)
			}
		}
		return nil
	}
	for _, c := range syncContenders {
		if c.name == request.Contender {
			return c.run
		}
	}
	return nil
}

// writeHeapProfile writes the heap profile of request's synced cache into
// dir (see heapProfileEnv). The profile is as of the last collection:
// heaptest.Live's.
func writeHeapProfile(b *testing.B, dir string, request heapRequest) {
	name := fmt.Sprintf("heap-%s-watchlist=%s-%s.pb.gz", request.Resource.Resource, map[bool]string{true: "on", false: "off"}[request.WatchList], request.Contender)
	if request.Selector != "" {
		name = "cachesize-" + strings.ReplaceAll(request.Selector, "=", "-") + "-" + name
	}
	f, err := os.Create(filepath.Join(dir, name))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		b.Fatal(err)
	}
}
