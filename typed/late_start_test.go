package typed_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/typed"
)

// TestKindsAskedForAfterStartRun: informers of a kind, or of a kind of
// object (unstructured, metadata-only), first asked for after Start run at
// once, and the waits report them, as the kinds known at Start do. They
// used to stay NotStarted while WaitForCacheSyncError returned nil.
func TestKindsAskedForAfterStartRun(t *testing.T) {
	factory, err := typed.NewFactoryForClients(oneFactoryClients(), scheme.Scheme)
	check(t, err)
	defer factory.Shutdown()
	ctx := t.Context()
	pods, err := typed.InformerFor[*corev1.Pod](factory)
	check(t, err)
	factory.Start(ctx)
	check(t, factory.WaitForCacheSync(ctx).AsError())

	configMaps, err := typed.UnstructuredFor(factory, configMapsGVR)
	check(t, err)
	secrets, err := typed.MetadataFor(factory, secretsGVR)
	check(t, err)
	check(t, factory.WaitForCacheSync(ctx).AsError())
	for name, informer := range map[string]interface{ Status() generic.Status }{"pods": pods, "configmaps": configMaps, "secrets": secrets} {
		if state := informer.Status().State; state != generic.Synced {
			t.Errorf("%s: %v, want Synced", name, state)
		}
	}
}
