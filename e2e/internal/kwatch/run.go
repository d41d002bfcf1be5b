package kwatch

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/e2e/apiserver"
	"github.com/generic-informers/generic/e2e/internal/cluster"
	"github.com/generic-informers/generic/typed"
)

// progressEvery is how often the initial sync's progress is printed.
const progressEvery = 250 * time.Millisecond

// Run watches the resources of opts until ctx ends, opts.Duration passes or,
// in the demo, its script is done; then it prints and returns the summary.
// In the demo, an error means the script did not see what it did.
func Run(ctx context.Context, opts Options) (Summary, error) {
	opts, err := opts.resolve()
	if err != nil {
		return nil, err
	}
	config, stop, err := connect(ctx, opts)
	if err != nil {
		return nil, err
	}
	defer stop()
	c, err := cluster.New(config)
	if err != nil {
		return nil, err
	}
	args, selector := opts.Resources, opts.Selector
	var script *script
	if opts.demo() {
		args = demoResources
		if selector == "" {
			selector = demoSelector
		}
		if script, err = startDemo(ctx, c, opts); err != nil {
			return nil, err
		}
	}
	if len(args) == 0 {
		return nil, errors.New("name at least one RESOURCE (the demo runs only on the embedded server)")
	}
	if _, err := labels.Parse(selector); err != nil {
		return nil, fmt.Errorf("-l %q: %w", selector, err)
	}
	var metrics *metricsServer
	if opts.MetricsAddr != "" {
		if metrics, err = serveMetrics(opts.MetricsAddr); err != nil {
			return nil, err
		}
		defer metrics.stop()
		fmt.Fprintf(opts.status(), "serving metrics at %s\n", metrics.url)
	}
	return watch(ctx, c, opts, args, selector, script, metrics)
}

// connect returns the config of the cluster to watch: the kubeconfig's, or
// that of an embedded API server started here and stopped by stop.
func connect(ctx context.Context, opts Options) (config *rest.Config, stop func(), err error) {
	if !opts.embedded() {
		config, err := clientcmd.BuildConfigFromFlags("", opts.Kubeconfig)
		if err != nil {
			return nil, nil, fmt.Errorf("kubeconfig %s: %w", opts.Kubeconfig, err)
		}
		return config, func() {}, nil
	}
	started := time.Now()
	server, err := apiserver.Start(ctx, apiserver.Options{})
	if err != nil {
		return nil, nil, err
	}
	fmt.Fprintf(opts.status(), "started an embedded kube-apiserver and etcd in %v\n", time.Since(started).Round(time.Millisecond))
	return server.Config, server.Stop, nil
}

func watch(ctx context.Context, c *cluster.Cluster, opts Options, args []string, selector string, script *script, metrics *metricsServer) (Summary, error) {
	events := make(chan Event, 4096)
	var extra []generic.FactoryOption
	metricsURL := ""
	if metrics != nil {
		extra = append(extra, generic.WithMetricsProvider(metrics.metrics))
		metricsURL = metrics.url
	}
	if opts.Shard != "" {
		shard, err := generic.ParseShard(opts.Shard) // checked by resolve
		if err != nil {
			return nil, err
		}
		extra = append(extra, generic.WithShard(shard.Index, shard.Count))
	}
	if opts.Member != "" {
		clients, err := kubernetes.NewForConfig(c.Config)
		if err != nil {
			return nil, err
		}
		m, err := opts.membership(clients.CoordinationV1().Leases(opts.leaseNamespace()))
		if err != nil {
			return nil, err
		}
		member, err := generic.NewMember(m)
		if err != nil {
			return nil, err
		}
		extra = append(extra, generic.WithMembership(member))
	}
	w, err := newWatcher(c.Config, opts.Namespace, selector, events, extra...)
	if err != nil {
		return nil, err
	}
	defer w.factory.Shutdown()
	resources := make([]*resource, 0, len(args))
	for _, arg := range args {
		r, err := w.watch(c.Mapper, arg, events)
		if err != nil {
			return nil, err
		}
		resources = append(resources, r)
	}
	if opts.Duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, opts.Duration)
		defer cancel()
	}
	counts := newCounter(resources)
	// The informers run until shutdown stops them, not until ctx (Ctrl-C,
	// --duration) ends: their states are read after ctx ends, and must be
	// what they were while watching, not Stopped.
	w.factory.Start(context.WithoutCancel(ctx))
	syncTimes := waitForSync(ctx, opts, w.factory, resources)
	scriptErr := stream(ctx, opts, events, counts, script)
	if opts.AfterWatch != nil {
		drain(opts, events, counts)
		opts.AfterWatch(metricsURL)
	}
	states := statesOf(w.factory, resources) // before the informers stop
	shutdown(w.factory, opts, events, counts)
	summary := counts.summary(syncTimes, states)
	if err := summary.Print(opts.status()); err != nil {
		return summary, err
	}
	return summary, scriptErr
}

// waitForSync prints progress until every resource has synced or ctx ends,
// and returns how long each took. If the factory's informers did not all
// sync, it prints why.
func waitForSync(ctx context.Context, opts Options, factory *typed.Factory, resources []*resource) map[string]time.Duration {
	took := waitForEach(ctx, opts, factory, resources)
	// Every informer has synced or ctx has ended: this does not block.
	if err := factory.WaitForCacheSync(ctx).AsError(); err != nil {
		fmt.Fprintf(opts.status(), "%s  initial sync did not finish: %v\n", time.Now().Format("15:04:05.000"), err)
	}
	return took
}

// waitForEach prints progress until every resource has synced or ctx ends,
// and returns how long each took.
func waitForEach(ctx context.Context, opts Options, factory *typed.Factory, resources []*resource) map[string]time.Duration {
	started := time.Now()
	type synced struct {
		name string
		took time.Duration
	}
	done := make(chan synced, len(resources))
	for _, r := range resources {
		go func() {
			select {
			case <-r.informer.HasSyncedChecker().Done():
				done <- synced{r.name, time.Since(started)}
			case <-ctx.Done():
			}
		}()
	}
	ticker := time.NewTicker(progressEvery)
	defer ticker.Stop()
	took := map[string]time.Duration{}
	progress := newProgressPrinter(opts.status(), factory, resources)
	for len(took) < len(resources) {
		select {
		case s := <-done:
			took[s.name] = s.took
			progress.print()
		case <-ticker.C:
			progress.print()
		case <-ctx.Done():
			return took
		}
	}
	progress.print()
	return took
}

// stream prints and counts events until ctx ends or the script is done.
func stream(ctx context.Context, opts Options, events <-chan Event, counts *counter, script *script) error {
	var scriptDone <-chan error
	var lingerDone <-chan time.Time
	if script != nil {
		scriptDone = script.run(ctx)
	}
	for {
		select {
		case e := <-events:
			handle(opts, e, counts, script)
		case err := <-scriptDone:
			if err != nil || opts.Linger == 0 {
				return err
			}
			fmt.Fprintf(opts.status(), "demo done; watching %v more\n", opts.Linger)
			scriptDone = nil
			linger := time.NewTimer(opts.Linger)
			defer linger.Stop()
			lingerDone = linger.C
		case <-lingerDone:
			return nil
		case <-ctx.Done():
			if script != nil && lingerDone == nil {
				return fmt.Errorf("the demo did not finish: %w", context.Cause(ctx))
			}
			return nil
		}
	}
}

// statesOf returns the state of each resource's informer.
func statesOf(factory *typed.Factory, resources []*resource) map[string]string {
	statuses := factory.Statuses()
	states := make(map[string]string, len(resources))
	for _, r := range resources {
		states[r.name] = statuses[r.gvr].State.String()
	}
	return states
}

// shutdown stops the informers while it goes on handling their events, so
// that a handler blocked on a full channel cannot hold up the shutdown,
// then handles what is left. The informers' own change to Stopped is not
// news: it is not printed.
func shutdown(factory *typed.Factory, opts Options, events <-chan Event, counts *counter) {
	counts.stopping = true
	done := make(chan struct{})
	go func() {
		defer close(done)
		factory.Shutdown()
	}()
	for {
		select {
		case e := <-events:
			handle(opts, e, counts, nil)
		case <-done:
			for {
				select {
				case e := <-events:
					handle(opts, e, counts, nil)
				default:
					return
				}
			}
		}
	}
}

// drain handles the events already sent.
func drain(opts Options, events <-chan Event, counts *counter) {
	for {
		select {
		case e := <-events:
			handle(opts, e, counts, nil)
		default:
			return
		}
	}
}

func handle(opts Options, e Event, counts *counter, script *script) {
	if counts.stopping && e.Type == StateChanged && e.State == "Stopped" {
		return
	}
	// An output that fails (a closed pipe) leaves nowhere to report it;
	// the events still count toward the script and the summary.
	_ = printEvent(opts.Out, opts.Output, e)
	counts.add(e)
	if script != nil {
		script.observe(e)
	}
}
