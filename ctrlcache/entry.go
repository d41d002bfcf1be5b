package ctrlcache

import (
	"fmt"
	"reflect"
	"slices"
	"sync/atomic"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// entry is one informer of an informerCache and its reader, as
// controller-runtime's internal.Cache and CacheReader: it reads the
// Handle's Lister (so a compact store's records are decoded) and answers as
// controller-runtime's CacheReader does (deep copies, the kind set on them,
// NotFound, Limit, no Continue, exact field selectors on IndexField's
// indexes).
type entry struct {
	view     view
	gvk      schema.GroupVersionKind
	resource schema.GroupResource
	// guessed: the kind was not served when the entry was made
	// (WaitForUnservedKinds), and resource is the one guessed from it.
	guessed         bool
	mapper          meta.RESTMapper
	disableDeepCopy bool
	// scope is the kind's scope once the RESTMapper knew it (a
	// meta.RESTScopeName); empty until then (a kind not served yet).
	scope atomic.Value
}

// clusterScoped reports whether the entry's kind is cluster-scoped; a kind
// not served (yet) is taken as namespaced, its informer being empty. The
// scope is asked of the RESTMapper until it knows it, then kept.
func (e *entry) clusterScoped() bool {
	scope, _ := e.scope.Load().(meta.RESTScopeName)
	if scope == "" {
		var err error
		if scope, err = scopeOf(e.mapper, e.gvk); err != nil {
			return false
		}
		e.scope.Store(scope)
	}
	return scope == meta.RESTScopeNameRoot
}

// groupResource is the entry's resource, for NotFound errors: of a kind
// that was not served when the entry was made, the one the RESTMapper
// knows now, if it does.
func (e *entry) groupResource() schema.GroupResource {
	if !e.guessed {
		return e.resource
	}
	mapping, err := e.mapper.RESTMapping(e.gvk.GroupKind(), e.gvk.Version)
	if err != nil {
		return e.resource
	}
	return mapping.Resource.GroupResource()
}

func (e *entry) get(key client.ObjectKey, out client.Object, opts ...client.GetOption) error {
	getOpts := client.GetOptions{}
	getOpts.ApplyOptions(opts)
	if e.clusterScoped() {
		key.Namespace = ""
	}
	obj, found, err := e.view.get(key.Namespace, key.Name)
	if err != nil {
		return err
	}
	if !found {
		return apierrors.NewNotFound(e.groupResource(), key.Name)
	}
	copied := e.deepCopy(getOpts.UnsafeDisableDeepCopy)
	if copied {
		obj = obj.DeepCopyObject()
	}
	outVal := reflect.ValueOf(out)
	objVal := reflect.ValueOf(obj)
	if !objVal.Type().AssignableTo(outVal.Type()) {
		return fmt.Errorf("cache had type %s, but %s was asked for", objVal.Type(), outVal.Type())
	}
	reflect.Indirect(outVal).Set(reflect.Indirect(objVal))
	if copied {
		out.GetObjectKind().SetGroupVersionKind(e.gvk)
	}
	return nil
}

// deepCopy reports whether a read hands out copies: unless the cache's
// config or the read's option disables it.
func (e *entry) deepCopy(unsafeDisable *bool) bool {
	return !e.disableDeepCopy && (unsafeDisable == nil || !*unsafeDisable)
}

func (e *entry) list(out client.ObjectList, opts ...client.ListOption) error {
	listOpts := client.ListOptions{}
	listOpts.ApplyOptions(opts)
	if listOpts.Continue != "" {
		return fmt.Errorf("continue list option is not supported by the cache")
	}
	objs, err := e.selected(listOpts)
	if err != nil {
		return err
	}
	copied := e.deepCopy(listOpts.UnsafeDisableDeepCopy)
	// objs is this read's own slice: the items (copies, or the cached
	// objects) are written over it.
	items := objs[:0]
	for _, obj := range objs {
		if listOpts.Limit > 0 && int64(len(items)) >= listOpts.Limit {
			break
		}
		if copied {
			obj = obj.DeepCopyObject()
			obj.GetObjectKind().SetGroupVersionKind(e.gvk)
		}
		items = append(items, obj)
	}
	if err := meta.SetList(out, items); err != nil {
		return err
	}
	out.SetContinue("continue-not-supported")
	return nil
}

// selected returns the objects listOpts select: by field index, then
// labels, or by namespace and labels.
func (e *entry) selected(listOpts client.ListOptions) ([]runtime.Object, error) {
	selector := listOpts.LabelSelector
	if selector == nil {
		selector = labels.Everything()
	}
	if listOpts.FieldSelector == nil {
		return e.view.list(listOpts.Namespace, selector)
	}
	if !requiresExactMatch(listOpts.FieldSelector) {
		return nil, fmt.Errorf("non-exact field matches are not supported by the cache")
	}
	objs, err := e.byIndexes(listOpts.FieldSelector.Requirements(), listOpts.Namespace)
	if err != nil {
		return nil, err
	}
	matched := objs[:0]
	for _, obj := range objs {
		accessor, err := meta.Accessor(obj)
		if err != nil {
			return nil, err
		}
		if selector.Matches(labels.Set(accessor.GetLabels())) {
			matched = append(matched, obj)
		}
	}
	return matched, nil
}

// byIndexes returns the objects every requirement's IndexField index maps
// its value to, in namespace, as controller-runtime's byIndexes.
func (e *entry) byIndexes(requires fields.Requirements, namespace string) ([]runtime.Object, error) {
	var objs []runtime.Object
	for i, req := range requires {
		indexName := fieldIndexName(req.Field)
		value := keyToNamespacedKey(namespace, req.Value)
		if i == 0 {
			found, err := e.view.byIndex(indexName, value)
			if err != nil || len(found) == 0 {
				return nil, err
			}
			objs = found
			continue
		}
		also, err := e.view.byIndex(indexName, value)
		if err != nil {
			return nil, err
		}
		keys := make(map[string]bool, len(also))
		for _, obj := range also {
			keys[objectKey(obj)] = true
		}
		objs = slices.DeleteFunc(objs, func(obj runtime.Object) bool { return !keys[objectKey(obj)] })
		if len(objs) == 0 {
			return nil, nil
		}
	}
	return objs, nil
}

// objectKey is obj's namespace/name (name, cluster-scoped).
func objectKey(obj runtime.Object) string {
	key, _ := toolscache.MetaNamespaceKeyFunc(obj)
	return key
}

// requiresExactMatch reports whether every requirement of selector is = or
// ==, as controller-runtime's selector.RequiresExactMatch.
func requiresExactMatch(selector fields.Selector) bool {
	requirements := selector.Requirements()
	if len(requirements) == 0 {
		return false
	}
	for _, req := range requirements {
		if req.Operator != "=" && req.Operator != "==" {
			return false
		}
	}
	return true
}

// fieldIndexName is the name of IndexField's index of field, as
// controller-runtime names it (its internal.FieldIndexName).
func fieldIndexName(field string) string { return "field:" + field }

// allNamespaces is the namespace part of an IndexField key that matches
// objects of every namespace (controller-runtime's internal
// allNamespacesNamespace).
const allNamespaces = "__all_namespaces"

func keyToNamespacedKey(namespace, value string) string {
	if namespace != "" {
		return namespace + "/" + value
	}
	return allNamespaces + "/" + value
}

// fieldIndexFunc is IndexField's index function of extractValue, as
// controller-runtime's indexByField makes it: each value keyed by the
// object's namespace, and for namespaced objects by every namespace too.
func fieldIndexFunc(extractValue client.IndexerFunc) toolscache.IndexFunc {
	return func(raw any) ([]string, error) {
		obj, ok := raw.(client.Object)
		if !ok {
			return nil, fmt.Errorf("object of type %T is not an Object", raw)
		}
		namespace := obj.GetNamespace()
		values := extractValue(obj)
		keys := make([]string, 0, 2*len(values))
		for _, value := range values {
			keys = append(keys, keyToNamespacedKey(namespace, value))
		}
		if namespace != "" {
			for _, value := range values {
				keys = append(keys, keyToNamespacedKey("", value))
			}
		}
		return keys, nil
	}
}
