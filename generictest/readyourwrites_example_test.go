package generictest_test

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/generic-informers/generic/generictest"
)

// A controller reads its own write: after an update, it waits until the
// informer's cache has applied it, and the Lister then returns the update
// or a later state, never the state before it.
func ExampleInformer_WaitForWrite() {
	t := newExampleT() // in a test, the test's t
	defer t.end()
	ctx := context.Background()
	fake := generictest.New(t, scheme.Scheme, generictest.Objects(&corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "settings"},
		Data:       map[string]string{"color": "blue"},
	}))
	configMaps := generictest.NewInformer[*corev1.ConfigMap](fake)
	client := fake.Clientset() // a kubernetes.Interface, as a controller has

	cm, err := configMaps.Lister().Namespace("default").Get("settings")
	if err != nil {
		panic(err)
	}
	cm = cm.DeepCopy() // cached objects are read-only
	cm.Data["color"] = "teal"

	updated, err := client.CoreV1().ConfigMaps("default").Update(ctx, cm, metav1.UpdateOptions{})
	if err != nil {
		panic(err)
	}
	if err := configMaps.WaitForWrite(ctx, updated); err != nil {
		panic(err)
	}
	cm, err = configMaps.Lister().Namespace("default").Get(updated.Name) // the update, or a later state
	if err != nil {
		panic(err)
	}
	fmt.Println(cm.Data["color"])
	// Output: teal
}
