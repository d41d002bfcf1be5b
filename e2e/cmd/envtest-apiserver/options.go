package main

import (
	"flag"
	"fmt"
	"os"
)

// options are envtest-apiserver's flags.
type options struct {
	// kubeconfig is the path of the kubeconfig to write; empty: a file in
	// a new temporary directory, removed at exit.
	kubeconfig string
	// apiserverFlags are extra kube-apiserver flags (apiserver.Options.Flags).
	apiserverFlags []string
	// verbosity is klog's; 0 keeps the servers' logs quiet.
	verbosity int
}

// parseFlags parses envtest-apiserver's command line. It returns
// flag.ErrHelp for -h, and an error for an unknown flag or an argument that
// is not a flag (the flag set has printed it with the usage on stderr).
func parseFlags(args []string) (options, error) {
	var opts options
	fs := flag.NewFlagSet("envtest-apiserver", flag.ContinueOnError)
	fs.StringVar(&opts.kubeconfig, "kubeconfig", "", "write the kubeconfig to this `path`, which must not exist (default: a file in a new temporary directory); removed at exit")
	fs.Func("apiserver-flag", "an extra kube-apiserver `flag`, for example --feature-gates=ShardedListAndWatch=false (repeatable)", func(value string) error {
		opts.apiserverFlags = append(opts.apiserverFlags, value)
		return nil
	})
	fs.IntVar(&opts.verbosity, "v", 0, "log `verbosity` of the servers on stderr; 0 keeps them quiet")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: envtest-apiserver [flags]\n\n"+
			"Runs an embedded kube-apiserver and etcd until SIGINT or SIGTERM, for envtest's\n"+
			"existing cluster: prints the kubeconfig's path once the server serves, then\n\n"+
			"  USE_EXISTING_CLUSTER=true KUBECONFIG=PATH go test ./...\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return options{}, err
	}
	if fs.NArg() > 0 {
		err := fmt.Errorf("unexpected argument %q: envtest-apiserver takes only flags", fs.Arg(0))
		fmt.Fprintln(os.Stderr, err)
		fs.Usage()
		return options{}, err
	}
	return opts, nil
}
