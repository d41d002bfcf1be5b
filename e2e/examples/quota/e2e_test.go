package main

import (
	"context"
	"fmt"
	"hash/fnv"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/generic-informers/generic/e2e/apiserver"
	genericprometheus "github.com/generic-informers/generic/prometheus"
)

var quotasGVR = SchemeGroupVersion.WithResource("quotas")

// namespaces are the test's: their FNV-1a hashes (the shard key's, KEP-5866)
// fall five in shard 0/2 and three in 1/2 (TestNamespacesSpanShards), so
// that each replica has Quotas to count. Names alike ("quota-0" to
// "quota-7") would all fall in one shard.
var namespaces = []string{"shop", "lab", "billing", "search", "maps", "media", "docs", "chat"}

// TestNamespacesSpanShards keeps the test's namespaces in both shards.
func TestNamespacesSpanShards(t *testing.T) {
	perShard := map[uint64]int{}
	for _, ns := range namespaces {
		h := fnv.New64a()
		h.Write([]byte(ns))
		perShard[h.Sum64()>>63]++
	}
	if diff := cmp.Diff(map[uint64]int{0: 5, 1: 3}, perShard); diff != "" {
		t.Errorf("namespaces per shard of 2 (-want +got):\n%s", diff)
	}
}

// TestReplicasOnAPIServer runs the controller as two replicas sharded by
// namespace against a real kube-apiserver: between them they count every
// Quota, through creates and deletes of what they count.
func TestReplicasOnAPIServer(t *testing.T) {
	server := apiserver.StartForTest(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := server.InstallCRDs(ctx, "testdata/quotas.example.com.yaml"); err != nil {
		t.Fatal(err)
	}
	kube := kubernetes.NewForConfigOrDie(server.Config)
	dyn := dynamic.NewForConfigOrDie(server.Config)
	want := map[string]Status{}
	for i, ns := range namespaces {
		must(t, create(ctx, kube, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
		must(t, createQuota(ctx, dyn, ns))
		for j := range i % 3 {
			must(t, create(ctx, kube, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("counted-%d", j), Labels: map[string]string{"app": "counted"}}}))
		}
		must(t, create(ctx, kube, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "other"}}))
		must(t, create(ctx, kube, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "token"}}))
		want[ns+"/quota"] = Status{ConfigMaps: i % 3, Secrets: 1, ObservedGeneration: 1}
	}

	var replicas sync.WaitGroup
	for _, shard := range []string{"0/2", "1/2"} {
		replicas.Go(func() {
			if err := run(ctx, server.Config, shard, genericprometheus.New()); err != nil {
				t.Errorf("replica %s: %v", shard, err)
			}
		})
	}
	defer replicas.Wait()
	defer cancel()

	waitForStatuses(ctx, t, dyn, want)
	// What they count changes: each replica follows its namespaces.
	for i, ns := range namespaces {
		must(t, create(ctx, kube, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "added", Labels: map[string]string{"app": "counted"}}}))
		must(t, kube.CoreV1().Secrets(ns).Delete(ctx, "token", metav1.DeleteOptions{}))
		want[ns+"/quota"] = Status{ConfigMaps: i%3 + 1, Secrets: 0, ObservedGeneration: 1}
	}
	waitForStatuses(ctx, t, dyn, want)
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// create creates a Namespace, ConfigMap or Secret.
func create(ctx context.Context, kube kubernetes.Interface, obj any) error {
	var err error
	switch obj := obj.(type) {
	case *corev1.Namespace:
		_, err = kube.CoreV1().Namespaces().Create(ctx, obj, metav1.CreateOptions{})
	case *corev1.ConfigMap:
		_, err = kube.CoreV1().ConfigMaps(obj.Namespace).Create(ctx, obj, metav1.CreateOptions{})
	case *corev1.Secret:
		_, err = kube.CoreV1().Secrets(obj.Namespace).Create(ctx, obj, metav1.CreateOptions{})
	}
	return err
}

func createQuota(ctx context.Context, dyn dynamic.Interface, ns string) error {
	quota := &unstructuredQuota{"apiVersion": "example.com/v1", "kind": "Quota",
		"metadata": map[string]any{"name": "quota", "namespace": ns},
		"spec":     map[string]any{"selector": map[string]any{"matchLabels": map[string]any{"app": "counted"}}}}
	_, err := dyn.Resource(quotasGVR).Namespace(ns).Create(ctx, quota.object(), metav1.CreateOptions{})
	return err
}

// waitForStatuses waits until the Quotas' statuses are want, failing with
// the last difference after two minutes.
func waitForStatuses(ctx context.Context, t *testing.T, dyn dynamic.Interface, want map[string]Status) {
	t.Helper()
	var diff string
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		got, err := statuses(ctx, dyn)
		if err != nil {
			return false, err
		}
		diff = cmp.Diff(want, got)
		return diff == "", nil
	})
	if err != nil {
		t.Fatalf("Quota statuses (-want +got), %v:\n%s", err, diff)
	}
}

func statuses(ctx context.Context, dyn dynamic.Interface) (map[string]Status, error) {
	list, err := dyn.Resource(quotasGVR).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	got := map[string]Status{}
	for _, item := range list.Items {
		var quota Quota
		if err := fromUnstructured(item.Object, &quota); err != nil {
			return nil, err
		}
		got[item.GetNamespace()+"/"+item.GetName()] = quota.Status
	}
	return got, nil
}
