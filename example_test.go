package generic_test

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"

	"github.com/generic-informers/generic"
)

// Widget is a CRD's Go type, as a controller author writes it.
type Widget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              struct {
		Size int `json:"size"`
	} `json:"spec"`
}

func (w *Widget) DeepCopyObject() runtime.Object {
	c := *w
	w.ObjectMeta.DeepCopyInto(&c.ObjectMeta)
	return &c
}

// A typed view of a dynamic client: each Widget is converted from
// unstructured once, as it arrives, and reads return *Widget with no
// conversion and no cast. A Widget that does not convert is reported and
// skipped; the others are served.
func ExampleNewFactory() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	widgets := schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{widgets: "WidgetList"},
		&unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "example.com/v1", "kind": "Widget",
			"metadata": map[string]any{"namespace": "default", "name": "small"},
			"spec":     map[string]any{"size": int64(1)},
		}},
		&unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "example.com/v1", "kind": "Widget",
			"metadata": map[string]any{"namespace": "default", "name": "broken"},
			"spec":     map[string]any{"size": "large"},
		}})

	factory, err := generic.NewFactory(generic.DynamicSource(client), generic.FromUnstructured[*Widget](),
		generic.WithErrorHandler(func(_ context.Context, err error) { fmt.Println("skipped:", err) }))
	if err != nil {
		panic(err)
	}
	defer factory.Shutdown()
	informer, err := factory.Acquire(widgets)
	if err != nil {
		panic(err)
	}
	defer informer.Release()
	factory.Start(ctx)
	if err := factory.WaitForCacheSync(ctx).AsError(); err != nil {
		panic(err)
	}

	small, err := informer.Lister().Namespace("default").Get("small") // a *Widget
	if err != nil {
		panic(err)
	}
	// The ErrorHandler runs on the informer's callbacks goroutine, not the
	// one that met the error: its line may come before or after this one.
	fmt.Println(small.Name, small.Spec.Size)
	// Unordered output:
	// skipped: convert example.com/v1, Resource=widgets "default/broken": from unstructured to *generic_test.Widget: unrecognized type: int
	// small 1
}
