// Package widget is the Go type of the Widget custom resource
// (widgets.example.com, testdata/crds/widgets.example.com.yaml), written by
// hand with no generated code besides DeepCopy, as a controller author would.
// The tests and the e2e module use it to show that the typed factory serves
// CRD types without informer-gen.
package widget

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
)

// SchemeGroupVersion is the group and version Widgets are served at.
var SchemeGroupVersion = schema.GroupVersion{Group: "example.com", Version: "v1"}

// GVR is the resource of Widgets.
var GVR = SchemeGroupVersion.WithResource("widgets")

// GVK is the kind of a Widget.
var GVK = SchemeGroupVersion.WithKind("Widget")

// Widget is a namespaced custom resource.
type Widget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   Spec   `json:"spec,omitempty"`
	Status Status `json:"status,omitempty"`
}

// Spec is what a Widget asks for.
type Spec struct {
	// Size is an integer; a fixture with a string here is malformed.
	Size  int32  `json:"size,omitempty"`
	Color string `json:"color,omitempty"`
	// ConfigMapName names a ConfigMap in the Widget's namespace.
	ConfigMapName string `json:"configMapName,omitempty"`
}

// Status is what a Widget reports.
type Status struct {
	Ready bool `json:"ready,omitempty"`
}

// WidgetList is a list of Widgets.
type WidgetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []Widget `json:"items"`
}

// AddToScheme registers Widget and WidgetList in scheme.
func AddToScheme(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(SchemeGroupVersion, &Widget{}, &WidgetList{})
	metav1.AddToGroupVersion(scheme, SchemeGroupVersion)
	return nil
}

// NewScheme returns a new scheme with client-go's built-in types and
// Widget, the one the tests and the e2e programs use. Registering known
// types cannot fail, so, as client-go's own scheme package does, it panics
// (utilruntime.Must) only on a programming error.
func NewScheme() *runtime.Scheme {
	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(AddToScheme(scheme))
	return scheme
}

// DeepCopyInto copies w into out.
func (w *Widget) DeepCopyInto(out *Widget) {
	*out = *w
	out.TypeMeta = w.TypeMeta
	w.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
}

// DeepCopy returns a deep copy of w.
func (w *Widget) DeepCopy() *Widget {
	if w == nil {
		return nil
	}
	out := new(Widget)
	w.DeepCopyInto(out)
	return out
}

// DeepCopyObject implements runtime.Object.
func (w *Widget) DeepCopyObject() runtime.Object {
	if c := w.DeepCopy(); c != nil {
		return c
	}
	return nil
}

// DeepCopyInto copies l into out.
func (l *WidgetList) DeepCopyInto(out *WidgetList) {
	*out = *l
	out.TypeMeta = l.TypeMeta
	l.ListMeta.DeepCopyInto(&out.ListMeta)
	if l.Items != nil {
		out.Items = make([]Widget, len(l.Items))
		for i := range l.Items {
			l.Items[i].DeepCopyInto(&out.Items[i])
		}
	}
}

// DeepCopy returns a deep copy of l.
func (l *WidgetList) DeepCopy() *WidgetList {
	if l == nil {
		return nil
	}
	out := new(WidgetList)
	l.DeepCopyInto(out)
	return out
}

// DeepCopyObject implements runtime.Object.
func (l *WidgetList) DeepCopyObject() runtime.Object {
	if c := l.DeepCopy(); c != nil {
		return c
	}
	return nil
}
