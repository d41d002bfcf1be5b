package main

import (
	"context"
	"errors"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// lines is an io.Writer that hands each Write, a line without its newline,
// to a channel.
type lines chan string

func (l lines) Write(p []byte) (int, error) {
	l <- strings.TrimSuffix(string(p), "\n")
	return len(p), nil
}

// TestRunServesEnvtest: run prints the kubeconfig's path once the server
// serves; controller-runtime's envtest, with USE_EXISTING_CLUSTER=true and
// KUBECONFIG set to it, starts on it, installs a CRD from a file, and its
// client creates and lists objects; when run's context ends, run returns
// nil, the kubeconfig (and the temporary directory it made) is gone and the
// server's port is closed.
func TestRunServesEnvtest(t *testing.T) {
	tests := []struct {
		name string
		// kubeconfig is the -kubeconfig flag, relative to a temp dir; empty:
		// the default.
		kubeconfig string
		// relative: -kubeconfig is given relative to the working
		// directory, the temp dir; run prints it absolute.
		relative bool
	}{
		{name: "default kubeconfig path"},
		{name: "-kubeconfig in a directory to create", kubeconfig: "envtest/kubeconfig"},
		{name: "-kubeconfig relative to the working directory", kubeconfig: "kubeconfig", relative: true},
	}
	// Absolute: a case changes the working directory.
	crd, err := filepath.Abs("../../../testdata/crds/widgets.example.com.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			opts := options{}
			wantPath := ""
			if tc.kubeconfig != "" {
				wantPath = filepath.Join(t.TempDir(), tc.kubeconfig)
				opts.kubeconfig = wantPath
			}
			if tc.relative {
				t.Chdir(filepath.Dir(wantPath))
				opts.kubeconfig = tc.kubeconfig
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			out := make(lines, 1)
			done := make(chan error, 1)
			go func() { done <- run(ctx, opts, out, io.Discard) }()
			var path string
			select {
			case path = <-out:
			case err := <-done:
				t.Fatalf("run returned before printing the kubeconfig's path: %v", err)
			case <-time.After(3 * time.Minute):
				t.Fatal("no kubeconfig path printed within 3 minutes")
			}
			if wantPath != "" && path != wantPath {
				t.Errorf("printed path %q, want -kubeconfig's, absolute: %q", path, wantPath)
			}
			info, err := os.Stat(path)
			if err != nil {
				t.Fatalf("kubeconfig: %v", err)
			}
			if diff := cmp.Diff(os.FileMode(0o600), info.Mode().Perm()); diff != "" {
				t.Errorf("kubeconfig %s's mode (-want +got):\n%s", path, diff)
			}
			host := useWithEnvtest(t, path, crd)

			cancel()
			if err := <-done; err != nil {
				t.Fatalf("run after its context ended: %v", err)
			}
			gone := []string{path}
			if wantPath == "" {
				gone = append(gone, filepath.Dir(path))
			}
			for _, p := range gone {
				if _, err := os.Lstat(p); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("%s after run returned: %v, want it removed", p, err)
				}
			}
			if conn, err := net.DialTimeout("tcp", host, time.Second); err == nil {
				conn.Close()
				t.Errorf("%s still accepts connections after run returned", host)
			}
		})
	}
}

// useWithEnvtest starts envtest on the existing cluster of the kubeconfig at
// path, as a suite run with USE_EXISTING_CLUSTER=true KUBECONFIG=path does,
// installs the Widget CRD (the file crd) through it, creates a Namespace and a Widget and
// lists Widgets with its client. It returns the server's host:port.
func useWithEnvtest(t *testing.T, path, crd string) string {
	t.Helper()
	t.Setenv("USE_EXISTING_CLUSTER", "true")
	t.Setenv("KUBECONFIG", path)
	env := &envtest.Environment{
		CRDInstallOptions: envtest.CRDInstallOptions{
			Paths:              []string{crd},
			ErrorIfPathMissing: true,
		},
	}
	config, err := env.Start()
	if err != nil {
		t.Fatalf("envtest on the existing cluster: %v", err)
	}
	defer func() {
		if err := env.Stop(); err != nil {
			t.Errorf("envtest Stop: %v", err)
		}
	}()
	ctx := context.Background()
	c, err := client.New(config, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "envtest"}}
	if err := c.Create(ctx, ns); err != nil {
		t.Fatalf("create a Namespace: %v", err)
	}
	widget := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"namespace": "envtest", "name": "first"},
	}}
	if err := c.Create(ctx, widget); err != nil {
		t.Fatalf("create a Widget after envtest installed its CRD: %v", err)
	}
	widgets := &unstructured.UnstructuredList{}
	widgets.SetAPIVersion("example.com/v1")
	widgets.SetKind("WidgetList")
	if err := c.List(ctx, widgets, client.InNamespace("envtest")); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, w := range widgets.Items {
		names = append(names, w.GetName())
	}
	if diff := cmp.Diff([]string{"first"}, names); diff != "" {
		t.Errorf("Widgets listed (-want +got):\n%s", diff)
	}
	u, err := url.Parse(config.Host)
	if err != nil {
		t.Fatal(err)
	}
	return u.Host
}

// TestRunRefusesExistingKubeconfig: run refuses a -kubeconfig that exists,
// with an error that names it, before starting anything, and leaves it as
// it was.
func TestRunRefusesExistingKubeconfig(t *testing.T) {
	tests := []struct {
		name   string
		create func(t *testing.T, path string)
	}{
		{name: "a file", create: func(t *testing.T, path string) {
			if err := os.WriteFile(path, []byte("another cluster's kubeconfig\n"), 0o600); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "a directory", create: func(t *testing.T, path string) {
			if err := os.Mkdir(path, 0o700); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "kubeconfig")
			tc.create(t, path)
			before, _ := os.Lstat(path)
			out := make(lines, 1)
			err := run(context.Background(), options{kubeconfig: path}, out, io.Discard)
			if err == nil || !strings.Contains(err.Error(), path+" exists") {
				t.Fatalf("run: %v, want an error saying %s exists", err, path)
			}
			if len(out) > 0 {
				t.Errorf("run printed %q", <-out)
			}
			after, err := os.Lstat(path)
			if err != nil || !os.SameFile(before, after) || before.ModTime() != after.ModTime() {
				t.Errorf("%s changed: %v", path, err)
			}
		})
	}
}
