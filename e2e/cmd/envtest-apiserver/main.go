// Command envtest-apiserver runs this project's embedded kube-apiserver
// (package github.com/generic-informers/generic/e2e/apiserver: etcd and
// kube-apiserver in one process, built from Go modules, no binaries to
// download) as controller-runtime envtest's existing cluster.
//
//	envtest-apiserver [-kubeconfig PATH] [-apiserver-flag FLAG]... [-v N]
//
// Once the API server serves, it writes a kubeconfig of a cluster
// administrator (system:masters) to PATH (default: a file in a new temporary
// directory) and prints PATH, absolute, alone on a line, on stdout. It serves
// until SIGINT or SIGTERM, then removes the kubeconfig and stops the
// servers. Point envtest at it (build it first: a SIGTERM to a backgrounded
// `go run` ends go run, not the server):
//
//	go -C e2e build -o /tmp/envtest-apiserver ./cmd/envtest-apiserver
//	/tmp/envtest-apiserver -kubeconfig /tmp/envtest/kubeconfig &
//	USE_EXISTING_CLUSTER=true KUBECONFIG=/tmp/envtest/kubeconfig go test ./...
//
// It refuses a PATH that exists, so that it never overwrites a kubeconfig of
// another cluster. Exit status: 0 once stopped by a signal, 1 when the
// server cannot start or the kubeconfig cannot be written, 2 on bad flags.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	os.Exit(mainStatus(os.Args[1:]))
}

// mainStatus runs the command with args and returns its exit status.
func mainStatus(args []string) int {
	opts, err := parseFlags(args)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		return 2 // the flag set has printed the error and the usage
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, opts, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "envtest-apiserver:", err)
		return 1
	}
	return 0
}
