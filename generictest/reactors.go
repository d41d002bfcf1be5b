package generictest

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
)

// stampCreate stores a created object with a new resourceVersion, as an
// API server would; the fake client would store it unchanged. The
// caller's object is not modified.
func (f *Fake) stampCreate(action clienttesting.Action) (bool, runtime.Object, error) {
	create, ok := action.(clienttesting.CreateAction)
	if !ok || create.GetSubresource() != "" {
		return false, nil, nil
	}
	obj, name, err := f.stamped(create.GetObject())
	if err != nil {
		return true, nil, err
	}
	tracker := f.client.Tracker()
	if err := tracker.Create(action.GetResource(), obj, action.GetNamespace()); err != nil {
		return true, nil, err
	}
	stored, err := tracker.Get(action.GetResource(), action.GetNamespace(), name)
	return true, stored, err
}

// stampUpdate is stampCreate for updates.
func (f *Fake) stampUpdate(action clienttesting.Action) (bool, runtime.Object, error) {
	update, ok := action.(clienttesting.UpdateAction)
	if !ok || update.GetSubresource() != "" {
		return false, nil, nil
	}
	obj, name, err := f.stamped(update.GetObject())
	if err != nil {
		return true, nil, err
	}
	tracker := f.client.Tracker()
	if err := tracker.Update(action.GetResource(), obj, action.GetNamespace()); err != nil {
		return true, nil, err
	}
	stored, err := tracker.Get(action.GetResource(), action.GetNamespace(), name)
	return true, stored, err
}

func (f *Fake) stamped(obj runtime.Object) (runtime.Object, string, error) {
	obj = obj.DeepCopyObject()
	accessor, err := meta.Accessor(obj)
	if err != nil {
		return nil, "", err
	}
	accessor.SetResourceVersion(f.nextResourceVersion())
	return obj, accessor.GetName(), nil
}

// watch serves the informers' watches as the fake client does, through a
// proxy the Fake can cut (WithoutWatch). The proxy also drains the fake
// client's watcher, whose buffer of 100 events panics when full, and
// filters by label selector, which the fake client does not.
func (f *Fake) watch(action clienttesting.Action) (bool, watch.Interface, error) {
	var opts metav1.ListOptions
	if w, ok := action.(clienttesting.WatchActionImpl); ok {
		opts = w.ListOptions
	}
	selector := labels.Everything()
	if opts.LabelSelector != "" {
		parsed, err := labels.Parse(opts.LabelSelector)
		if err != nil {
			return true, nil, err
		}
		selector = parsed
	}
	present, ok := f.listedBefore(action.GetResource(), action.GetNamespace(), opts)
	if !ok {
		var err error
		if present, err = f.matching(action.GetResource(), action.GetNamespace(), selector); err != nil {
			return true, nil, err
		}
	}
	inner, err := f.client.Tracker().Watch(action.GetResource(), action.GetNamespace(), opts)
	if err != nil {
		return true, nil, err
	}
	key := watchKey{gvr: action.GetResource(), namespace: action.GetNamespace()}
	return true, f.watches.add(key, inner, selector, present), nil
}

// list serves a list as the fake client does, and remembers which objects
// it showed as matching the list's selector: a watch from the list's
// resourceVersion starts from them (the informer has them), even if they
// changed in between.
func (f *Fake) list(action clienttesting.Action) (bool, runtime.Object, error) {
	list, ok := action.(clienttesting.ListActionImpl)
	if !ok {
		return false, nil, nil
	}
	selector, err := labels.Parse(list.ListOptions.LabelSelector)
	if err != nil {
		return true, nil, err
	}
	gvk, err := f.mapper.KindFor(action.GetResource())
	if err != nil {
		return true, nil, err
	}
	obj, err := f.client.Tracker().List(action.GetResource(), gvk, action.GetNamespace())
	if err != nil {
		return true, nil, err
	}
	present, err := matchingIn(obj, selector)
	if err != nil {
		return true, nil, err
	}
	listMeta, err := meta.ListAccessor(obj)
	if err != nil {
		return true, nil, err
	}
	f.listedMu.Lock()
	f.listed[listedKey{action.GetResource(), action.GetNamespace(), list.ListOptions.LabelSelector, listMeta.GetResourceVersion()}] = present
	f.listedMu.Unlock()
	return true, obj, nil
}

// listedKey names a list the Fake served.
type listedKey struct {
	gvr                                  schema.GroupVersionResource
	namespace, selector, resourceVersion string
}

// listedBefore returns what the list a watch resumes from showed.
func (f *Fake) listedBefore(gvr schema.GroupVersionResource, namespace string, opts metav1.ListOptions) (map[string]bool, bool) {
	f.listedMu.Lock()
	defer f.listedMu.Unlock()
	present, ok := f.listed[listedKey{gvr, namespace, opts.LabelSelector, opts.ResourceVersion}]
	if !ok {
		return nil, false
	}
	copied := make(map[string]bool, len(present))
	for k, v := range present {
		copied[k] = v
	}
	return copied, true
}

// matching returns the keys of the objects of gvr in namespace that
// selector matches now: the best guess of what the informer has, for a
// watch that does not resume from a list.
func (f *Fake) matching(gvr schema.GroupVersionResource, namespace string, selector labels.Selector) (map[string]bool, error) {
	gvk, err := f.mapper.KindFor(gvr)
	if err != nil {
		return nil, err
	}
	list, err := f.client.Tracker().List(gvr, gvk, namespace)
	if err != nil {
		return nil, err
	}
	return matchingIn(list, selector)
}

// matchingIn returns the keys of the items of list that selector matches.
func matchingIn(list runtime.Object, selector labels.Selector) (map[string]bool, error) {
	objs, err := meta.ExtractList(list)
	if err != nil {
		return nil, err
	}
	present := map[string]bool{}
	for _, obj := range objs {
		accessor, err := meta.Accessor(obj)
		if err != nil {
			return nil, err
		}
		if selector.Matches(labels.Set(accessor.GetLabels())) {
			key, _ := cache.MetaNamespaceKeyFunc(obj)
			present[key] = true
		}
	}
	return present, nil
}
