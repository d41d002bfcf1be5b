package generic_test

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/wait"
	kubefake "k8s.io/client-go/kubernetes/fake"

	"github.com/generic-informers/generic"
)

// Two replicas of a controller divide the ConfigMaps through their
// Leases, with no StatefulSet and nobody to tell them their index: each
// holds the shard of the live replicas, ordered by identity, that falls to
// it, and owns what it holds.
func ExampleWithMembership() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	client := shardExampleClient()
	// Against a cluster, the Leases of a clientset of your own, in a namespace you name.
	leases := kubefake.NewClientset().CoordinationV1().Leases("default")

	replica := func(podName string) *generic.Factory[*unstructured.Unstructured] {
		// One Member per replica, made once, given to every factory of
		// the replica.
		member, err := generic.NewMember(generic.Membership{
			Leases:   leases,
			Group:    "mycontroller", // the same for every replica
			Identity: podName,        // in a Pod: os.Getenv("POD_NAME"), set from metadata.name
			// Short, for the example; the defaults are 15 s, 10 s and 2 s.
			LeaseDuration: 3 * time.Second, RenewDeadline: 2 * time.Second, RetryPeriod: 100 * time.Millisecond,
		})
		if err != nil {
			panic(err)
		}
		factory, err := generic.NewFactory[*unstructured.Unstructured](generic.DynamicSource(client), nil, generic.WithMembership(member))
		if err != nil {
			panic(err)
		}
		if _, err := factory.Acquire(configMapsGVR); err != nil {
			panic(err)
		}
		factory.Start(ctx) // joins the group; the informers start once it has a shard
		if err := factory.WaitForCacheSync(ctx).AsError(); err != nil {
			panic(err)
		}
		return factory
	}
	a, b := replica("mycontroller-7d9f-abcde"), replica("mycontroller-7d9f-xyzuv")
	defer a.Shutdown() // leaves the group cleanly
	defer b.Shutdown()

	for _, factory := range []*generic.Factory[*unstructured.Unstructured]{a, b} {
		_ = wait.PollUntilContextCancel(ctx, 10*time.Millisecond, true, func(context.Context) (bool, error) {
			status, _ := factory.Membership()
			return status.Owns && len(status.Members) == 2, nil
		})
		status, _ := factory.Membership()
		configMaps, _ := factory.Acquire(configMapsGVR)
		held, _ := configMaps.Lister().List(labels.Everything())
		owned := 0
		for _, cm := range held {
			if configMaps.Ownership().Owns(cm) {
				owned++
			}
		}
		configMaps.Release()
		fmt.Println(status.Identity, "is shard", status.Shard, "of", status.Members, "and holds", len(held), "of 100, owns", owned)
	}
	// Output:
	// mycontroller-7d9f-abcde is shard 0/2 of [mycontroller-7d9f-abcde mycontroller-7d9f-xyzuv] and holds 48 of 100, owns 48
	// mycontroller-7d9f-xyzuv is shard 1/2 of [mycontroller-7d9f-abcde mycontroller-7d9f-xyzuv] and holds 52 of 100, owns 52
}
