package generictest

import (
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
)

// watch serves the informers' watches as the fake client does, through a
// proxy the Fake can cut (WithoutWatch). The proxy also drains the fake
// client's watcher, whose buffer of 100 events panics when full, and
// filters by label and field selectors, which the fake client does not.
func (f *Fake) watch(action clienttesting.Action) (bool, watch.Interface, error) {
	var opts metav1.ListOptions
	if w, ok := action.(clienttesting.WatchActionImpl); ok {
		opts = w.ListOptions
	}
	sel, err := selectionOf(action.GetNamespace(), opts)
	if err != nil {
		return true, nil, apierrors.NewBadRequest(err.Error())
	}
	present, ok := f.listedBefore(action.GetResource(), action.GetNamespace(), opts)
	if !ok {
		if present, err = f.matching(action.GetResource(), action.GetNamespace(), sel); err != nil {
			return true, nil, err
		}
	}
	inner, err := f.client.Tracker().Watch(action.GetResource(), action.GetNamespace(), opts)
	if err != nil {
		return true, nil, err
	}
	key := watchKey{gvr: action.GetResource(), namespace: action.GetNamespace()}
	return true, f.watches.add(key, inner, sel, present), nil
}

// list serves a list as the fake client does, with the list's field
// selector applied too, and remembers which objects it showed: a watch
// from the list's resourceVersion starts from them (the informer has
// them), even if they changed in between.
func (f *Fake) list(action clienttesting.Action) (bool, runtime.Object, error) {
	list, ok := action.(clienttesting.ListActionImpl)
	if !ok {
		return false, nil, nil
	}
	sel, err := selectionOf(action.GetNamespace(), list.ListOptions)
	if err != nil {
		return true, nil, apierrors.NewBadRequest(err.Error())
	}
	gvk, err := f.mapper.KindFor(action.GetResource())
	if err != nil {
		return true, nil, err
	}
	obj, err := f.client.Tracker().List(action.GetResource(), gvk, action.GetNamespace())
	if err != nil {
		return true, nil, err
	}
	if obj, err = servedOf(obj, sel); err != nil {
		return true, nil, err
	}
	present, err := matchingIn(obj, sel)
	if err != nil {
		return true, nil, err
	}
	listMeta, err := meta.ListAccessor(obj)
	if err != nil {
		return true, nil, err
	}
	f.listedMu.Lock()
	f.listed[listedKeyOf(action.GetResource(), action.GetNamespace(), list.ListOptions, listMeta.GetResourceVersion())] = present
	f.listedMu.Unlock()
	return true, obj, nil
}

// listedKey names a list the Fake served.
type listedKey struct {
	gvr                                                schema.GroupVersionResource
	namespace, labels, fields, shards, resourceVersion string
}

func listedKeyOf(gvr schema.GroupVersionResource, namespace string, opts metav1.ListOptions, resourceVersion string) listedKey {
	return listedKey{gvr, namespace, opts.LabelSelector, opts.FieldSelector, opts.ShardSelector, resourceVersion}
}

// listedBefore returns what the list a watch resumes from showed.
func (f *Fake) listedBefore(gvr schema.GroupVersionResource, namespace string, opts metav1.ListOptions) (map[string]bool, bool) {
	f.listedMu.Lock()
	defer f.listedMu.Unlock()
	present, ok := f.listed[listedKeyOf(gvr, namespace, opts, opts.ResourceVersion)]
	if !ok {
		return nil, false
	}
	copied := make(map[string]bool, len(present))
	for k, v := range present {
		copied[k] = v
	}
	return copied, true
}

// matching returns the keys of the objects of gvr in namespace that sel
// serves now: the best guess of what the informer has, for a watch that
// does not resume from a list.
func (f *Fake) matching(gvr schema.GroupVersionResource, namespace string, sel selection) (map[string]bool, error) {
	gvk, err := f.mapper.KindFor(gvr)
	if err != nil {
		return nil, err
	}
	list, err := f.client.Tracker().List(gvr, gvk, namespace)
	if err != nil {
		return nil, err
	}
	return matchingIn(list, sel)
}

// servedOf returns list with only the items sel serves.
func servedOf(list runtime.Object, sel selection) (runtime.Object, error) {
	objs, err := meta.ExtractList(list)
	if err != nil {
		return nil, err
	}
	served := make([]runtime.Object, 0, len(objs))
	for _, obj := range objs {
		if sel.served(obj) {
			served = append(served, obj)
		}
	}
	list = list.DeepCopyObject()
	return list, meta.SetList(list, served)
}

// matchingIn returns the keys of the items of list that sel serves.
func matchingIn(list runtime.Object, sel selection) (map[string]bool, error) {
	objs, err := meta.ExtractList(list)
	if err != nil {
		return nil, err
	}
	present := map[string]bool{}
	for _, obj := range objs {
		if sel.served(obj) {
			key, _ := cache.MetaNamespaceKeyFunc(obj)
			present[key] = true
		}
	}
	return present, nil
}
