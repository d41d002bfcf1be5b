package generic_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	clienttesting "k8s.io/client-go/testing"

	"github.com/generic-informers/generic"
)

// Each Acquire is one hold on the shared informer of its resource and
// selection; each Handle's Release drops exactly its own hold, once, and
// never waits. The last Release stops the informer.
func ExampleFactory_Acquire() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	gizmos := schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "gizmos"}
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{configMapsGVR: "ConfigMapList", gizmos: "GizmoList"})
	client.PrependReactor("list", "gizmos", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewNotFound(gizmos.GroupResource(), "") // its CRD is not installed
	})
	factory, err := generic.NewFactory[*unstructured.Unstructured](generic.DynamicSource(client), nil)
	if err != nil {
		panic(err)
	}
	defer factory.Shutdown() // outside any handler: Shutdown waits for the informers and their handlers

	first, err := factory.Acquire(configMapsGVR)
	if err != nil {
		panic(err)
	}
	second, err := factory.Acquire(configMapsGVR) // the same informer, a second hold
	if err != nil {
		panic(err)
	}
	inTeamA, err := factory.Acquire(configMapsGVR, generic.WithNamespace("team-a")) // another selection: another informer
	if err != nil {
		panic(err)
	}
	defer inTeamA.Release()
	factory.Start(ctx)
	if err := factory.WaitForCacheSync(ctx).AsError(); err != nil {
		panic(err)
	}
	fmt.Println("shared:", first.Informer() == second.Informer(), "| another selection shared:", first.Informer() == inTeamA.Informer())

	fmt.Println(first.Release())  // false: second still holds it
	fmt.Println(first.Release())  // false: a Handle drops its hold once
	fmt.Println(second.Release()) // true: the last hold; the informer stops

	// WaitForCacheSync says which informers did not sync, and why: give it
	// a deadline, as a NotServed or Forbidden informer keeps trying.
	_, err = factory.Acquire(gizmos)
	if err != nil {
		panic(err)
	}
	short, cancelShort := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancelShort()
	var syncErr *generic.SyncError
	if err := factory.WaitForCacheSync(short).AsError(); errors.As(err, &syncErr) {
		fmt.Println(syncErr.Unsynced[0].GVR.Resource, syncErr.Unsynced[0].State, errors.Is(err, context.DeadlineExceeded))
	}
	// Output:
	// shared: true | another selection shared: false
	// false
	// false
	// true
	// gizmos NotServed true
}
