package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"k8s.io/klog/v2"

	"github.com/generic-informers/generic/e2e/apiserver"
)

// run starts the servers, writes the kubeconfig, prints its absolute path on
// out (alone on a line) and a note on status, and serves until ctx is done; then
// it removes the kubeconfig (and the temporary directory it made) and stops
// the servers. It fails if the kubeconfig's path exists, before starting
// anything, or if the servers cannot start.
func run(ctx context.Context, opts options, out, status io.Writer) error {
	configureLogging(opts.verbosity)
	path := opts.kubeconfig
	if path == "" {
		dir, err := os.MkdirTemp("", "envtest-apiserver")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		path = filepath.Join(dir, "kubeconfig")
	} else {
		// Absolute, so that what run prints holds from any directory.
		abs, err := filepath.Abs(path)
		if err != nil {
			return err
		}
		if err := checkKubeconfigPath(abs); err != nil {
			return err
		}
		path = abs
	}
	started := time.Now()
	server, err := apiserver.Start(ctx, apiserver.Options{Flags: opts.apiserverFlags})
	if err != nil {
		return err
	}
	defer server.Stop()
	if err := writeKubeconfig(path, server.Config); err != nil {
		return err
	}
	defer os.Remove(path)
	fmt.Fprintf(status, "kube-apiserver serves at %s (started in %v); SIGINT or SIGTERM stops it. For envtest:\n  USE_EXISTING_CLUSTER=true KUBECONFIG=%s go test ./...\n",
		server.Config.Host, time.Since(started).Round(time.Millisecond), path)
	fmt.Fprintln(out, path)
	<-ctx.Done()
	fmt.Fprintln(status, "stopping kube-apiserver and etcd")
	return nil
}

// configureLogging keeps klog quiet, the servers' logs included, unless
// verbosity asks for logs on stderr (as kwatch does).
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
