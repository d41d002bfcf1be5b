package integration

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/e2e/apiserver"
	"github.com/generic-informers/generic/internal/widget"
	"github.com/generic-informers/generic/typed"
)

// TestWatchInterruptionRelistsAfterGone cuts an informer's connection, deletes
// and changes objects behind its back, compacts etcd so that the informer's
// resourceVersion is gone, and lets it reconnect: its watch gets 410 Gone, it
// relists, every missed delete reaches the handler as a tombstone carrying
// the last state it had cached, and nothing stale stays in the lister.
//
// The server runs without its watch cache, so that the watch is served by
// etcd and the compaction is what the informer meets.
func TestWatchInterruptionRelistsAfterGone(t *testing.T) {
	server := apiserver.StartForTest(t, "--watch-cache=false")
	c := newCluster(t, server)
	apply(t, c, namespaces("gone")...)
	apply(t, c, load(t, "gone", "configmaps.yaml")...)

	config, g := newGate(server.Config)
	factory, err := typed.NewFactory(config, widget.NewScheme(), generic.WithNamespace("gone-a"))
	if err != nil {
		t.Fatal(err)
	}
	defer factory.Shutdown()
	configMaps, err := typed.InformerFor[*corev1.ConfigMap](factory)
	if err != nil {
		t.Fatal(err)
	}
	rec := newRecorder(configMapColor)
	if _, err := configMaps.AddEventHandler(rec); err != nil {
		t.Fatal(err)
	}
	syncAll(t, factory.Start, factory.WaitForCacheSync)
	rec.next(t, 2)

	ctx := context.Background()
	client := kubernetes.NewForConfigOrDie(server.Config)
	// client-go's reflector relists, rather than re-watching from its
	// resourceVersion, after a watch that ended within a second with no
	// event: give the watch an event first.
	before := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "before", Namespace: "gone-a"}, Data: map[string]string{"color": "grey"}}
	if _, err := client.CoreV1().ConfigMaps("gone-a").Create(ctx, before, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	rec.next(t, 1)
	g.Cut()
	for _, name := range []string{"settings", "flags", "before"} {
		if err := client.CoreV1().ConfigMaps("gone-a").Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	extra := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "later", Namespace: "gone-a"}, Data: map[string]string{"color": "pink"}}
	if _, err := client.CoreV1().ConfigMaps("gone-a").Create(ctx, extra, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := server.CompactEtcd(ctx); err != nil {
		t.Fatal(err)
	}
	g.Restore()

	want := []event{
		{Verb: "DELETED", Key: "gone-a/before", Tombstone: true, State: "grey"},
		{Verb: "DELETED", Key: "gone-a/flags", Tombstone: true},
		{Verb: "ADDED", Key: "gone-a/later", State: "pink"},
		{Verb: "DELETED", Key: "gone-a/settings", Tombstone: true, State: "blue"},
	}
	if diff := cmp.Diff(want, rec.next(t, 4)); diff != "" {
		t.Errorf("events after the relist (-want +got):\n%s", diff)
	}
	if g.Gone() == 0 {
		t.Error("the informer's watch never got 410 Gone")
	}
	err = wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		all, err := configMaps.Lister().List(labels.Everything())
		return err == nil && cmp.Equal([]string{"gone-a/later"}, keys(all)), nil
	})
	if err != nil {
		all, _ := configMaps.Lister().List(labels.Everything())
		t.Errorf("lister after the relist holds %v, want only gone-a/later", keys(all))
	}
}
