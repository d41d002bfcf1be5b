package generictest_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/cache"

	"github.com/generic-informers/generic/generictest"
)

// exampleT stands in for the *testing.T of a test, which Examples have
// not: it fails by panicking and runs its cleanups when told.
type exampleT struct {
	testing.TB // not set: only the methods below are called
	cleanups   []func()
}

func newExampleT() *exampleT                     { return &exampleT{} }
func (t *exampleT) Helper()                      {}
func (t *exampleT) Cleanup(f func())             { t.cleanups = append(t.cleanups, f) }
func (t *exampleT) Fatal(args ...any)            { panic(fmt.Sprint(args...)) }
func (t *exampleT) Fatalf(f string, args ...any) { panic(fmt.Sprintf(f, args...)) }
func (t *exampleT) end() {
	for i := len(t.cleanups) - 1; i >= 0; i-- {
		t.cleanups[i]()
	}
}

// A test of what handlers receive: no sleeps, no polling; each change
// returns once the handlers have seen it.
func ExampleRecorder() {
	t := newExampleT() // in a test, the test's t
	defer t.end()
	fake := generictest.New(t, scheme.Scheme, generictest.Objects(
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "settings"}},
	))
	configMaps := generictest.NewInformer[*corev1.ConfigMap](fake)
	rec := generictest.NewRecorder[*corev1.ConfigMap]()
	if _, err := configMaps.AddEventHandler(rec); err != nil {
		t.Fatal(err)
	}

	fake.Create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "flags"}})
	fake.Delete(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "settings"}})

	want := []generictest.Event{
		{Verb: generictest.Added, Key: "default/settings"}, // the cached objects, replayed to a new handler
		{Verb: generictest.Added, Key: "default/flags"},
		{Verb: generictest.Deleted, Key: "default/settings"},
	}
	fmt.Println(cmp.Diff(want, rec.Events(), generictest.IgnoreResourceVersion()) == "")
	// Output: true
}

// A test of a controller's outcome: WaitFor waits until the cache holds
// what the controller should have made, and fails with a cmp.Diff if it
// never does.
func ExampleWaitForState() {
	t := newExampleT()
	defer t.end()
	fake := generictest.New(t, scheme.Scheme)
	configMaps := generictest.NewInformer[*corev1.ConfigMap](fake)

	// The code under test would write this through fake.Dynamic().
	fake.Create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
		Namespace: "default", Name: "settings", Labels: map[string]string{"owner": "controller"},
	}})

	generictest.WaitForState(configMaps, []string{"controller"}, func(cms []*corev1.ConfigMap) []string {
		var owners []string
		for _, cm := range cms {
			owners = append(owners, cm.Labels["owner"])
		}
		return owners
	})
	fmt.Println("reached")
	// Output: reached
}

// A test of a controller that writes through client-go's typed clientset:
// its writes reach the informers as an API server's would, and WaitFor
// waits for their outcome.
func ExampleFake_Clientset() {
	t := newExampleT()
	defer t.end()
	fake := generictest.New(t, scheme.Scheme)
	configMaps := generictest.NewInformer[*corev1.ConfigMap](fake)
	client := fake.Clientset() // the controller's kubernetes.Interface

	// The controller under test: it labels each ConfigMap it is told of.
	if _, err := configMaps.AddEventHandler(cache.TypedResourceEventHandlerFuncs[*corev1.ConfigMap]{
		AddFunc: func(cm *corev1.ConfigMap) {
			labelled := cm.DeepCopy() // the informer's object is read-only
			metav1.SetMetaDataLabel(&labelled.ObjectMeta, "seen", "true")
			if _, err := client.CoreV1().ConfigMaps(cm.Namespace).Update(context.Background(), labelled, metav1.UpdateOptions{}); err != nil {
				fmt.Println(err)
			}
		},
	}); err != nil {
		t.Fatal(err)
	}

	fake.Create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "settings"}})

	generictest.WaitForState(configMaps, []string{"default/settings seen=true"}, func(cms []*corev1.ConfigMap) []string {
		var shown []string
		for _, cm := range cms {
			shown = append(shown, cm.Namespace+"/"+cm.Name+" seen="+cm.Labels["seen"])
		}
		return shown
	})
	fmt.Println("labelled")
	// Output: labelled
}
