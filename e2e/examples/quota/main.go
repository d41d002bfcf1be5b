// Command quota is a CRD status controller written on this library: each
// Quota's status counts the ConfigMaps of its namespace its selector
// matches (read as *unstructured.Unstructured) and the Secrets of its
// namespace (metadata only). It runs as replica i of n (-shard i/n, sharded
// by namespace), serves its metrics, and never reconciles a Quota from a
// cache older than its own last status write. Its tests run on generictest
// (quota_test.go) and on the embedded API server with two sharded replicas
// (e2e_test.go).
package main

import (
	"context"
	"errors"
	"flag"
	"net/http"
	"os"
	"os/signal"
	"syscall"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/controller"
	genericprometheus "github.com/generic-informers/generic/prometheus"
	"github.com/generic-informers/generic/typed"
)

func main() {
	shard := flag.String("shard", "0/1", "this replica's shard: index/count")
	metricsAddr := flag.String("metrics-addr", ":8080", "where to serve /metrics")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	metrics := genericprometheus.New()
	go http.ListenAndServe(*metricsAddr, metrics.Handler()) //nolint:errcheck // the process's life
	config, err := clientcmd.BuildConfigFromFlags("", os.Getenv("KUBECONFIG"))
	if err == nil {
		err = run(ctx, config, *shard, metrics)
	}
	if err != nil {
		klog.Fatal(err)
	}
}

// run runs the replica of shard ("index/count") until ctx ends, measuring
// through metrics.
func run(ctx context.Context, config *rest.Config, shard string, metrics *genericprometheus.Metrics) error {
	s, err := generic.ParseShard(shard)
	scheme := runtime.NewScheme()
	if err := errors.Join(err, clientgoscheme.AddToScheme(scheme), AddToScheme(scheme)); err != nil {
		return err
	}
	factory, err := typed.NewFactory(config, scheme, generic.WithShard(s.Index, s.Count),
		generic.WithShardKey(generic.ShardByNamespace), generic.WithMetricsProvider(metrics))
	if err != nil {
		return err
	}
	defer factory.Shutdown()
	quotas, err1 := typed.InformerFor[*Quota](factory)
	configMaps, err2 := typed.UnstructuredFor(factory, corev1.SchemeGroupVersion.WithResource("configmaps"))
	secrets, err3 := typed.MetadataFor(factory, corev1.SchemeGroupVersion.WithResource("secrets"))
	client, err4 := typed.ClientFor[*Quota](factory)
	c, err := newController(quotas, configMaps, secrets, client, controller.WithQueueMetrics(metrics))
	if err := errors.Join(err1, err2, err3, err4, err); err != nil {
		return err
	}
	factory.Start(ctx)
	return c.Run(ctx)
}

// newController makes the controller over its informers and client.
func newController(quotas generic.Informer[*Quota], configMaps generic.Informer[*unstructured.Unstructured],
	secrets generic.Informer[*metav1.PartialObjectMetadata], client *typed.Client[*Quota], opts ...controller.Option) (*controller.Controller, error) {
	// reconcile writes the counts of the Quota of key into its status.
	reconcile := func(ctx context.Context, key cache.ObjectName) (controller.Result, error) {
		quota, err := quotas.Lister().Namespace(key.Namespace).Get(key.Name)
		if err != nil { // NotFound: the Quota is gone
			return controller.Result{}, controller.IgnoreNotFound(err)
		}
		selector, err := metav1.LabelSelectorAsSelector(quota.Spec.Selector) // nil, matching nothing, if invalid
		cms, err1 := configMaps.Lister().Namespace(key.Namespace).List(selector)
		secretList, err2 := secrets.Lister().Namespace(key.Namespace).List(labels.Everything())
		status := Status{ConfigMaps: len(cms), Secrets: len(secretList), ObservedGeneration: quota.Generation}
		if err != nil {
			status.Error = err.Error()
		}
		if err := errors.Join(err1, err2); err != nil || quota.Status == status {
			return controller.Result{}, err
		}
		quota = quota.DeepCopy()
		quota.Status = status
		_, err = client.UpdateStatus(ctx, quota, metav1.UpdateOptions{})
		return controller.Result{}, err
	}
	return controller.New("quota", controller.For(quotas, controller.GenerationChanged), reconcile, append(opts,
		controller.WatchesByIndex(configMaps, quotas, cache.NamespaceIndex, controller.NamespaceOf),
		controller.WatchesByIndex(secrets, quotas, cache.NamespaceIndex, controller.NamespaceOf))...)
}
