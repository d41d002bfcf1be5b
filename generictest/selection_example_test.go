package generictest_test

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/generictest"
)

// Informers of a selection: the Fake's factory limited to one namespace
// (FactoryOptions), and an informer of its own label selector (the
// informer's Options). The Fake learns each informer's selection from its
// requests, and waits for its handlers only for the changes it selects.
func ExampleNewInformer() {
	t := newExampleT()
	defer t.end()
	configMap := func(namespace, name, tier string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
			Namespace: namespace, Name: name, Labels: map[string]string{"tier": tier},
		}}
	}
	fake := generictest.New(t, scheme.Scheme,
		generictest.Objects(configMap("team-a", "web", "front"), configMap("team-a", "db", "back"), configMap("team-b", "cache", "back")),
		generictest.FactoryOptions(generic.WithNamespace("team-a")))

	all := generictest.NewInformer[*corev1.ConfigMap](fake)
	back := generictest.NewInformer[*corev1.ConfigMap](fake, generic.WithLabelSelector("tier=back"))

	fake.Create(configMap("team-a", "queue", "back"))  // returns once both informers' handlers have seen it
	fake.Create(configMap("team-b", "proxy", "front")) // outside both selections: nothing to wait for

	for _, informer := range []*generictest.Informer[*corev1.ConfigMap]{all, back} {
		cms, err := informer.Lister().List(labels.Everything())
		if err != nil {
			panic(err)
		}
		fmt.Println(len(cms), "ConfigMaps")
	}
	// Output:
	// 3 ConfigMaps
	// 2 ConfigMaps
}
