package generictest

import (
	"fmt"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/sharding"

	"github.com/generic-informers/generic/internal/shardcheck"
)

// selection is what one list or watch request selects: its namespace,
// label selector, field selector and shard selector.
//
// The Fake serves as an API server without the ShardedListAndWatch feature
// gate (as client-go's fake client, which drops a list's shardInfo): it
// sends the objects of the namespace, labels and fields (served), and the
// informer keeps those of its shard itself (holds).
type selection struct {
	namespace string
	labels    labels.Selector
	fields    fields.Selector
	shard     sharding.Selector // nil: every object
}

// everything selects every object of every namespace.
func everything() selection {
	return selection{labels: labels.Everything(), fields: fields.Everything()}
}

// selectionOf reads the selection of a request in namespace ("" for all)
// made with opts; a selector the server would refuse is an error.
func selectionOf(namespace string, opts metav1.ListOptions) (selection, error) {
	s := everything()
	s.namespace = namespace
	var err error
	if s.labels, err = labels.Parse(opts.LabelSelector); err != nil {
		return s, fmt.Errorf("labelSelector: %w", err)
	}
	if s.fields, err = fields.ParseSelector(opts.FieldSelector); err != nil {
		return s, fmt.Errorf("fieldSelector: %w", err)
	}
	if opts.ShardSelector != "" {
		if s.shard, err = shardcheck.ParseSelector(opts.ShardSelector); err != nil {
			return s, fmt.Errorf("shardSelector: %w", err)
		}
	}
	return s, nil
}

// served reports whether the Fake sends obj to a request of s: in its
// namespace, matching its label and field selectors.
func (s selection) served(obj runtime.Object) bool {
	accessor, err := meta.Accessor(obj)
	if err != nil {
		return false
	}
	if s.namespace != "" && accessor.GetNamespace() != s.namespace {
		return false
	}
	return s.labels.Matches(labels.Set(accessor.GetLabels())) && s.fields.Matches(fieldsOf(obj, accessor, s.fields))
}

// holds reports whether an informer whose requests select s keeps obj:
// served to it, and in its shard.
func (s selection) holds(obj runtime.Object) bool {
	if !s.served(obj) {
		return false
	}
	if s.shard == nil {
		return true
	}
	in, err := s.shard.Matches(obj)
	return err == nil && in
}

// String describes s, for a test's failure.
func (s selection) String() string {
	parts := []string{"in all namespaces"}
	if s.namespace != "" {
		parts[0] = "in namespace " + s.namespace
	}
	if !s.labels.Empty() {
		parts = append(parts, "labels "+s.labels.String())
	}
	if !s.fields.Empty() {
		parts = append(parts, "fields "+s.fields.String())
	}
	if s.shard != nil && !s.shard.Empty() {
		parts = append(parts, "shard "+s.shard.String())
	}
	return strings.Join(parts, ", ")
}

// fieldsOf returns the values of obj's fields that selector asks for:
// metadata.name and metadata.namespace, which every resource supports, and
// other paths (spec.nodeName of a Pod, say) read from the object as the
// resource's own field label conversion would.
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

// informerRequests is what the Fake learns of one informer of its factory
// from the requests it makes: the selection of the last one. Changes wait
// for the handlers of an informer only for the objects it holds, and the
// Fake waits for the watch of each informer.
type informerRequests struct {
	mu   sync.Mutex
	last selection
	made bool
}

// record notes a request of the informer.
func (r *informerRequests) record(namespace string, opts metav1.ListOptions) {
	s, err := selectionOf(namespace, opts)
	if err != nil {
		return // refused by the Fake too: nothing is served to it
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.last, r.made = s, true
}

// selection returns the selection of the informer's last request; before
// any, every object.
func (r *informerRequests) selection() selection {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.made {
		return everything()
	}
	return r.last
}
