package shardcheck

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/sharding"
)

// Request is what one list or watch request selects, read as the API
// server reads it: the fakes of the library's tests and of generictest
// serve with it.
type Request struct {
	Namespace string // "" for all
	Labels    labels.Selector
	Fields    fields.Selector
	Shard     sharding.Selector // nil: every object
}

// Everything selects every object of every namespace.
func Everything() Request {
	return Request{Labels: labels.Everything(), Fields: fields.Everything()}
}

// ParseRequest reads the request in namespace ("" for all) made with
// opts; a selector the server would refuse is an error.
func ParseRequest(namespace string, opts metav1.ListOptions) (Request, error) {
	r := Everything()
	r.Namespace = namespace
	var err error
	if r.Labels, err = labels.Parse(opts.LabelSelector); err != nil {
		return r, fmt.Errorf("labelSelector: %w", err)
	}
	if r.Fields, err = fields.ParseSelector(opts.FieldSelector); err != nil {
		return r, fmt.Errorf("fieldSelector: %w", err)
	}
	if opts.ShardSelector != "" {
		if r.Shard, err = ParseSelector(opts.ShardSelector); err != nil {
			return r, fmt.Errorf("shardSelector: %w", err)
		}
	}
	return r, nil
}

// Matches reports whether obj is in the request's namespace and matches
// its label and field selectors; the shard is not looked at (InShard).
func (r Request) Matches(obj runtime.Object) bool {
	accessor, err := meta.Accessor(obj)
	if err != nil {
		return false
	}
	if r.Namespace != "" && accessor.GetNamespace() != r.Namespace {
		return false
	}
	return r.Labels.Matches(labels.Set(accessor.GetLabels())) && r.Fields.Matches(fieldsOf(obj, accessor, r.Fields))
}

// InShard reports whether obj is in the request's shard (every object
// when it names none).
func (r Request) InShard(obj runtime.Object) bool {
	if r.Shard == nil {
		return true
	}
	in, err := r.Shard.Matches(obj)
	return err == nil && in
}

// String describes the request, for a test's failure.
func (r Request) String() string {
	parts := []string{"in all namespaces"}
	if r.Namespace != "" {
		parts[0] = "in namespace " + r.Namespace
	}
	if r.Labels != nil && !r.Labels.Empty() {
		parts = append(parts, "labels "+r.Labels.String())
	}
	if r.Fields != nil && !r.Fields.Empty() {
		parts = append(parts, "fields "+r.Fields.String())
	}
	if r.Shard != nil && !r.Shard.Empty() {
		parts = append(parts, "shard "+r.Shard.String())
	}
	return strings.Join(parts, ", ")
}

// fieldsOf returns the values of obj's fields that selector asks for:
// metadata.name and metadata.namespace, which every resource supports, and
// other paths (spec.nodeName of a Pod, say) read from an unstructured
// object as the resource's own field label conversion would.
func fieldsOf(obj runtime.Object, accessor metav1.Object, selector fields.Selector) fields.Set {
	set := fields.Set{"metadata.name": accessor.GetName(), "metadata.namespace": accessor.GetNamespace()}
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return set
	}
	for _, r := range selector.Requirements() {
		if _, known := set[r.Field]; known {
			continue
		}
		if v, found, err := unstructured.NestedFieldNoCopy(u.Object, strings.Split(r.Field, ".")...); err == nil && found {
			set[r.Field] = fmt.Sprint(v)
		}
	}
	return set
}
