package bench

import (
	"context"
	"slices"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/typed"
)

// BenchmarkWaitForWrite measures read-your-writes latency on the embedded
// API server: each op updates one ConfigMap and waits, with the informer's
// WaitForWrite, until the informer's cache holds the update. It reports the
// latency from the update's response to the wait's return, over the b.N
// ops: p50-ns and p99-ns (ns/op also counts the update itself).
func BenchmarkWaitForWrite(b *testing.B) {
	const namespace = "bench-ryw"
	s := sharedServer(b)
	ctx := context.Background()
	client, err := kubernetes.NewForConfig(s.Config)
	if err != nil {
		b.Fatal(err)
	}
	_, err = client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		b.Fatal(err)
	}
	cms := client.CoreV1().ConfigMaps(namespace)
	target, err := cms.Get(ctx, "target", metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		target, err = cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "target"}}, metav1.CreateOptions{})
	}
	if err != nil {
		b.Fatal(err)
	}

	factory, err := typed.NewFactory(s.Config, clientgoscheme.Scheme, generic.WithNamespace(namespace))
	if err != nil {
		b.Fatal(err)
	}
	defer factory.Shutdown()
	configMaps, err := typed.InformerFor[*corev1.ConfigMap](factory)
	if err != nil {
		b.Fatal(err)
	}
	factory.Start(ctx)
	if err := factory.WaitForCacheSync(ctx).AsError(); err != nil {
		b.Fatal(err)
	}

	latencies := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		target = target.DeepCopy()
		if target.Data == nil {
			target.Data = map[string]string{}
		}
		target.Data["i"] = strconv.Itoa(i)
		target, err = cms.Update(ctx, target, metav1.UpdateOptions{})
		if err != nil {
			b.Fatal(err)
		}
		written := time.Now()
		if err := configMaps.WaitForWrite(ctx, target); err != nil {
			b.Fatal(err)
		}
		latencies = append(latencies, time.Since(written))
	}
	b.StopTimer()
	slices.Sort(latencies)
	b.ReportMetric(float64(latencies[len(latencies)/2].Nanoseconds()), "p50-ns")
	b.ReportMetric(float64(latencies[len(latencies)*99/100].Nanoseconds()), "p99-ns")
}
