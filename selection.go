package generic

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/sharding"
)

// selection is what an informer asks the server for, as far as an object
// tells whether it is in it: a namespace ("" for all), a label selector,
// and a field selector, which only names the object's metadata.name and
// metadata.namespace are read for. An informer of a Factory has its
// Options'; one of NewInformer, whose ListerWatcher selects on its own,
// has the zero selection, which excludes nothing. The shard is read from
// the informer's shard state, which may change.
type selection struct {
	namespace string
	labels    labels.Selector
	fields    fields.Selector
}

// selectionOf is the selection the Options make (validated already).
func selectionOf(o options) selection {
	s := selection{namespace: o.namespace}
	s.labels, _ = labels.Parse(o.labelSelector)
	s.fields, _ = fields.ParseSelector(o.fieldSelector)
	return s
}

// excludes reports whether obj, as written, is certainly outside the
// selection or outside shard (nil: every object), so that the server
// sends the informer no event of it. It answers false whenever it cannot
// tell, as for a field selector on other fields than the metadata's name
// and namespace.
func (s selection) excludes(obj interface {
	runtime.Object
	metav1.Object
}, shard sharding.Selector) bool {
	if shard != nil {
		if in, err := shard.Matches(obj); err == nil && !in {
			return true
		}
	}
	// A cluster-scoped object is in no namespace, and informers of its
	// resource ignore theirs.
	if s.namespace != "" && obj.GetNamespace() != "" && obj.GetNamespace() != s.namespace {
		return true
	}
	if s.labels != nil && !s.labels.Matches(labels.Set(obj.GetLabels())) {
		return true
	}
	return s.fields != nil && metadataOnly(s.fields) &&
		!s.fields.Matches(fields.Set{"metadata.name": obj.GetName(), "metadata.namespace": obj.GetNamespace()})
}

// metadataOnly reports whether the field selector names no field but the
// metadata's name and namespace.
func metadataOnly(selector fields.Selector) bool {
	for _, r := range selector.Requirements() {
		if r.Field != "metadata.name" && r.Field != "metadata.namespace" {
			return false
		}
	}
	return true
}
