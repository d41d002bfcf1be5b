package apiserver_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/generic-informers/generic/e2e/apiserver"
)

func TestStartForTest(t *testing.T) {
	started := time.Now()
	server := apiserver.StartForTest(t)
	t.Logf("up in %v", time.Since(started))
	client := kubernetes.NewForConfigOrDie(server.Config)
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "probe"}}
	if _, err := client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := server.CompactEtcd(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestStartForProgram(t *testing.T) {
	started := time.Now()
	server, err := apiserver.Start(context.Background(), apiserver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("up in %v", time.Since(started))
	defer server.Stop()
	client := kubernetes.NewForConfigOrDie(server.Config)
	if _, err := client.CoreV1().Namespaces().Get(context.Background(), "default", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TestInstallCRDs: a CRD from a file is served when InstallCRDs returns (a
// custom resource can be created at once); bad input is refused with an
// error that names it, before anything is created.
func TestInstallCRDs(t *testing.T) {
	server := apiserver.StartForTest(t)
	ctx := context.Background()
	tests := []struct {
		name    string
		paths   []string
		wantErr string
	}{
		{name: "a CRD", paths: []string{"../../testdata/crds/widgets.example.com.yaml"}},
		{name: "no such file", paths: []string{"../../testdata/crds/none.yaml"}, wantErr: "no such file or directory"},
		{name: "not a CRD", paths: []string{"../../testdata/namespaces.yaml"}, wantErr: "is not an apiextensions.k8s.io/v1 CustomResourceDefinition"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := server.InstallCRDs(ctx, tc.paths...)
			if diff := cmp.Diff(tc.wantErr != "", err != nil); diff != "" || err != nil && !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("InstallCRDs: %v, want an error saying %q", err, tc.wantErr)
			}
			if err != nil {
				return
			}
			widget := &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "example.com/v1", "kind": "Widget",
				"metadata": map[string]any{"namespace": "default", "name": "first"},
			}}
			widgets := dynamic.NewForConfigOrDie(server.Config).Resource(schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"})
			if _, err := widgets.Namespace("default").Create(ctx, widget, metav1.CreateOptions{}); err != nil {
				t.Fatalf("creating a Widget right after InstallCRDs: %v", err)
			}
		})
	}
}
