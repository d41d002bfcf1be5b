package apiserver_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
