package bench

import (
	"context"
	"sync/atomic"
	"syscall"
	"testing"

	corev1 "k8s.io/api/core/v1"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/generic-informers/generic"
	genericprometheus "github.com/generic-informers/generic/prometheus"
)

// metricsIngester is genericIngester with the informer's metrics going to
// provider, and a scrape-free Prometheus registry's worth of work: the
// counters and the latency histogram on every event.
func metricsIngester(provider generic.MetricsProvider) ingester {
	return func(ctx context.Context, lw toolscache.ListerWatcher, want int64, done chan<- struct{}) {
		var opts []generic.InformerOption
		if provider != nil {
			opts = append(opts, generic.WithMetricsProvider(provider))
		}
		informer, err := generic.NewInformer[*corev1.Pod](lw, podsGVR, nil, opts...)
		if err != nil {
			panic(err)
		}
		var n atomic.Int64
		_, _ = informer.AddEventHandler(toolscache.TypedResourceEventHandlerFuncs[*corev1.Pod]{
			AddFunc:    func(*corev1.Pod) { counted(&n, want, done) },
			UpdateFunc: func(_, _ *corev1.Pod) { counted(&n, want, done) },
		})
		informer.Run(ctx)
	}
}

// BenchmarkIngestMetrics is BenchmarkIngest's generic contender (10 watch
// events per object through an informer to a counting handler; one op is
// all of them) without metrics and with the Prometheus provider
// (genericprometheus): events counted by type, each event stamped at
// arrival and its delivery latency observed in a histogram at the handler.
// The difference is what metrics cost the ingest; cpu-ns/event is the
// process's CPU time per event, steadier than ns/event on a shared
// machine. Compare with
//
//	go test -run '^$' -bench IngestMetrics -count 10 | benchstat -col /metrics -
func BenchmarkIngestMetrics(b *testing.B) {
	events := ingestEvents()
	empty := podList(0)
	for _, c := range []struct {
		name     string
		provider func() generic.MetricsProvider
	}{
		{"none", func() generic.MetricsProvider { return nil }},
		{"prometheus", func() generic.MetricsProvider { return genericprometheus.New() }},
	} {
		b.Run("metrics="+c.name, func(b *testing.B) {
			b.ReportAllocs()
			cpuBefore := cpuTime(b)
			for b.Loop() {
				ctx, cancel := context.WithCancel(context.Background())
				done, stopped := make(chan struct{}), make(chan struct{})
				run := metricsIngester(c.provider())
				go func() {
					defer close(stopped)
					run(ctx, &memoryListerWatcher{list: empty, events: events}, int64(len(events)), done)
				}()
				<-done
				cancel()
				<-stopped
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(events)), "ns/event")
			b.ReportMetric(float64(cpuTime(b)-cpuBefore)/float64(b.N)/float64(len(events)), "cpu-ns/event")
		})
	}
}

// cpuTime is the CPU time (user and system) the process has used, in ns:
// on a machine shared with other work, a steadier measure of what the
// metrics cost than the elapsed time.
func cpuTime(b *testing.B) int64 {
	var usage syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &usage); err != nil {
		b.Fatal(err)
	}
	return usage.Utime.Nano() + usage.Stime.Nano()
}
