package main

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// SchemeGroupVersion is the Quota's group and version.
var SchemeGroupVersion = schema.GroupVersion{Group: "example.com", Version: "v1"}

// Quota counts, in its status, the ConfigMaps of its namespace its
// selector matches and the Secrets of its namespace
// (testdata/quotas.example.com.yaml is its CRD).
type Quota struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   Spec   `json:"spec,omitempty"`
	Status Status `json:"status,omitempty"`
}

// Spec selects the ConfigMaps to count.
type Spec struct {
	// Selector selects ConfigMaps of the Quota's namespace; nil selects
	// none, empty all.
	Selector *metav1.LabelSelector `json:"selector,omitempty"`
}

// Status is what the controller counted.
type Status struct {
	ConfigMaps int `json:"configMaps"`
	Secrets    int `json:"secrets"`
	// ObservedGeneration is the generation of the spec counted for.
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Error says why the Quota could not be counted ("" if it was).
	Error string `json:"error,omitempty"`
}

// QuotaList is a list of Quotas.
type QuotaList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []Quota `json:"items"`
}

// AddToScheme registers Quota and QuotaList in scheme.
func AddToScheme(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(SchemeGroupVersion, &Quota{}, &QuotaList{})
	metav1.AddToGroupVersion(scheme, SchemeGroupVersion)
	return nil
}

// DeepCopyInto copies q into out.
func (q *Quota) DeepCopyInto(out *Quota) {
	*out = *q
	q.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	out.Spec.Selector = q.Spec.Selector.DeepCopy()
}

// DeepCopy returns a copy of q.
func (q *Quota) DeepCopy() *Quota {
	if q == nil {
		return nil
	}
	out := new(Quota)
	q.DeepCopyInto(out)
	return out
}

// DeepCopyObject returns a copy of q.
func (q *Quota) DeepCopyObject() runtime.Object { return q.DeepCopy() }

// DeepCopyObject returns a copy of l.
func (l *QuotaList) DeepCopyObject() runtime.Object {
	if l == nil {
		return nil
	}
	out := &QuotaList{TypeMeta: l.TypeMeta}
	l.ListMeta.DeepCopyInto(&out.ListMeta)
	for i := range l.Items {
		out.Items = append(out.Items, *l.Items[i].DeepCopy())
	}
	return out
}
