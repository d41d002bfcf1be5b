package kwatch_test

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/sharding"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/generic-informers/generic/e2e/apiserver"
	"github.com/generic-informers/generic/e2e/internal/kwatch"
)

// TestShardFlag runs kwatch --shard i/2 on the ConfigMaps of a namespace
// of a server without the ShardedListAndWatch gate (kwatch filters on the
// client): each run caches the ConfigMaps whose UID hashes into its half,
// as metav1.ListOptions.ShardSelector's doc writes the halves, and the two
// together cache every one; without --shard it caches all.
func TestShardFlag(t *testing.T) {
	const namespace, objects = "sharded", 200
	server := apiserver.StartForTest(t)
	client := kubernetes.NewForConfigOrDie(server.Config)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if _, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for i := range objects {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", i)}}
		if _, err := client.CoreV1().ConfigMaps(namespace).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	list, err := client.CoreV1().ConfigMaps(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig := writeKubeconfig(t, server.Config)

	tests := []struct {
		name, shard string
		// start and end bound the shard's range of the UID's hash.
		start, end string
	}{
		{name: "no --shard", shard: "", start: "0x0000000000000000", end: "0x10000000000000000"},
		{name: "--shard 0/2", shard: "0/2", start: "0x0000000000000000", end: "0x8000000000000000"},
		{name: "--shard 1/2", shard: "1/2", start: "0x8000000000000000", end: "0x10000000000000000"},
	}
	total := 0
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			selector := sharding.NewSelector(sharding.ShardRangeRequirement{Key: "object.metadata.uid", Start: tt.start, End: tt.end})
			want := 0
			for i := range list.Items {
				if in, err := selector.Matches(&list.Items[i]); err != nil {
					t.Fatal(err)
				} else if in {
					want++
				}
			}
			if tt.shard != "" {
				if want == 0 || want == len(list.Items) {
					t.Fatalf("shard %s holds %d of %d ConfigMaps: the test checks nothing", tt.shard, want, len(list.Items))
				}
				total += want
			}
			var out bytes.Buffer
			got, err := kwatch.Run(ctx, kwatch.Options{
				Kubeconfig: kubeconfig, Namespace: namespace, Resources: []string{"configmaps"},
				Shard: tt.shard, Duration: 3 * time.Second, Out: &out,
			})
			if err != nil {
				t.Fatalf("kwatch: %v\n%s", err, out.String())
			}
			wantSummary := kwatch.Summary{{Resource: "configmaps", Cached: want, State: "Synced"}}
			if diff := cmp.Diff(wantSummary, got, cmpopts.IgnoreFields(kwatch.ResourceSummary{}, "SyncTime")); diff != "" {
				t.Errorf("summary (-want +got):\n%s\n%s", diff, out.String())
			}
			if diff := cmp.Diff(wantSummary, parseSummaryTable(t, out.String())); diff != "" {
				t.Errorf("printed summary (-want +got):\n%s", diff)
			}
		})
	}
	if total != len(list.Items) {
		t.Errorf("the shards hold %d ConfigMaps together, want %d", total, len(list.Items))
	}
}

// writeKubeconfig writes a kubeconfig file that reaches the server as
// config does, and returns its path.
func writeKubeconfig(t *testing.T, config *rest.Config) string {
	t.Helper()
	kubeconfig := clientcmdapi.NewConfig()
	kubeconfig.Clusters["test"] = &clientcmdapi.Cluster{
		Server: config.Host, CertificateAuthorityData: config.CAData, TLSServerName: config.ServerName, InsecureSkipTLSVerify: config.Insecure,
	}
	kubeconfig.AuthInfos["test"] = &clientcmdapi.AuthInfo{Token: config.BearerToken, ClientCertificateData: config.CertData, ClientKeyData: config.KeyData}
	kubeconfig.Contexts["test"] = &clientcmdapi.Context{Cluster: "test", AuthInfo: "test"}
	kubeconfig.CurrentContext = "test"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kubeconfig, path); err != nil {
		t.Fatal(err)
	}
	return path
}
