// Command kwatch watches Kubernetes resources through the generic informers
// library, as a controller would see them: the initial sync's progress, one
// line per event, and a summary at exit.
//
//	kwatch [flags] RESOURCE...
//
// RESOURCE is a plural name, optionally with its group: configmaps,
// widgets.example.com. Every resource is watched through one typed.Factory:
// kinds in client-go's scheme as typed objects, everything else (custom
// resources) as *unstructured.Unstructured, with one Start, one wait for the
// initial sync, one Statuses and one Shutdown.
//
// With no kubeconfig (--kubeconfig or $KUBECONFIG), kwatch starts an
// embedded kube-apiserver; with no RESOURCE there, it runs a demo: it
// applies testdata/demo/, watches configmaps and widgets.example.com, makes a
// scripted set of changes and exits with the summary.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
	"k8s.io/klog/v2"

	"github.com/generic-informers/generic/e2e/internal/kwatch"
)

func main() {
	if err := newCommand().Execute(); err != nil {
		os.Exit(1)
	}
}

func newCommand() *cobra.Command {
	var opts kwatch.Options
	var verbosity int
	cmd := &cobra.Command{
		Use:   "kwatch [flags] RESOURCE...",
		Short: "Watch resources through generic informers and summarise what happened",
		Long: "kwatch watches resources as a controller's informers see them: the initial sync's\n" +
			"progress, one line per event (time, type, resource, namespace/name, resourceVersion)\n" +
			"and a summary at exit. With no kubeconfig it starts an embedded kube-apiserver, and\n" +
			"with no RESOURCE there it runs a scripted demo.",
		Example: "  kwatch                                  # the demo, on an embedded API server\n" +
			"  kwatch --demo-objects 10000 --metrics-addr 127.0.0.1:9090 --linger 1m\n" +
			"  kwatch --kubeconfig ~/.kube/config -n default configmaps widgets.example.com\n" +
			"  kwatch --kubeconfig ~/.kube/config --shard 1/3 pods   # replica 1 of 3\n" +
			"  kwatch --kubeconfig ~/.kube/config --member kwatch pods  # one of any number of replicas\n" +
			"  kwatch -l app=web -o json --duration 30s pods",
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			configureLogging(verbosity)
			opts.Resources = args
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			_, err := kwatch.Run(ctx, opts)
			return err
		},
	}
	flags := cmd.Flags()
	flags.StringVar(&opts.Kubeconfig, "kubeconfig", "", "kubeconfig file (default $KUBECONFIG; with neither, an embedded API server)")
	flags.StringVarP(&opts.Namespace, "namespace", "n", "", "watch one namespace (default all)")
	flags.StringVarP(&opts.Selector, "selector", "l", "", "label selector, for example app=web")
	flags.StringVarP(&opts.Output, "output", "o", "text", "event output: text or json (one JSON object per event)")
	flags.DurationVar(&opts.Duration, "duration", 0, "stop after this long (0: until Ctrl-C, or the end of the demo)")
	flags.StringVar(&opts.Testdata, "testdata", "../testdata", "the repository's testdata folder, for the demo")
	flags.IntVar(&opts.DemoObjects, "demo-objects", 0, "in the demo, create this many more ConfigMaps before watching, for an initial sync of that size")
	flags.StringVar(&opts.MetricsAddr, "metrics-addr", "", "serve the informers' Prometheus metrics at http://ADDR/metrics while watching, for example 127.0.0.1:9090")
	flags.StringVar(&opts.Shard, "shard", "", "hold one shard of every resource, index/count (for example 1/3): run count replicas with index 0 to count-1 (KEP-5866 sharded list and watch)")
	flags.StringVar(&opts.Member, "member", "", "be a replica of a Lease membership, group or group/identity (identity default: the host's name): the live replicas share every resource's objects and reshard by themselves")
	flags.StringVar(&opts.LeaseNamespace, "lease-namespace", "default", "the namespace of --member's Leases")
	flags.DurationVar(&opts.Linger, "linger", 0, "in the demo, keep watching (and serving --metrics-addr) this long after the script is done")
	flags.IntVarP(&verbosity, "verbose", "v", 0, "log verbosity; 0 keeps the API server's and client's logs quiet")
	cmd.SetContext(context.Background())
	return cmd
}

// configureLogging keeps klog quiet, the embedded API server's logs
// included, unless verbosity asks for logs on stderr.
func configureLogging(verbosity int) {
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	if verbosity > 0 {
		_ = fs.Set("v", fmt.Sprint(verbosity))
		return
	}
	_ = fs.Set("logtostderr", "false")
	_ = fs.Set("alsologtostderr", "false")
	_ = fs.Set("stderrthreshold", "FATAL")
	klog.SetOutput(io.Discard)
}
