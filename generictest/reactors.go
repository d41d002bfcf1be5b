package generictest

import (
	"encoding/json"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/apimachinery/pkg/watch"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
)

// stampingTracker is the fake client's tracker, stamping every object it
// stores through Create, Update or Patch with a new resourceVersion, as an
// API server would; the tracker itself keeps versions out of the objects.
// Every write of the dynamic client, and so of the typed clientset
// (Fake.Clientset), reaches the tracker through it.
type stampingTracker struct {
	clienttesting.ObjectTracker
	next func() string
}

// Create stores a stamped copy of obj; the caller's object is not modified.
func (t *stampingTracker) Create(gvr schema.GroupVersionResource, obj runtime.Object, ns string, opts ...metav1.CreateOptions) error {
	obj, err := t.stamped(obj.DeepCopyObject())
	if err != nil {
		return err
	}
	return t.ObjectTracker.Create(gvr, obj, ns, opts...)
}

// Update is Create for updates.
func (t *stampingTracker) Update(gvr schema.GroupVersionResource, obj runtime.Object, ns string, opts ...metav1.UpdateOptions) error {
	obj, err := t.stamped(obj.DeepCopyObject())
	if err != nil {
		return err
	}
	return t.ObjectTracker.Update(gvr, obj, ns, opts...)
}

// Patch stamps patched itself, which is the patch reaction's own copy and
// what it returns to the client.
func (t *stampingTracker) Patch(gvr schema.GroupVersionResource, patched runtime.Object, ns string, opts ...metav1.PatchOptions) error {
	patched, err := t.stamped(patched)
	if err != nil {
		return err
	}
	return t.ObjectTracker.Patch(gvr, patched, ns, opts...)
}

func (t *stampingTracker) stamped(obj runtime.Object) (runtime.Object, error) {
	accessor, err := meta.Accessor(obj)
	if err != nil {
		return nil, err
	}
	accessor.SetResourceVersion(t.next())
	return obj, nil
}

// strategicPatch serves strategic merge patches and server-side applies as
// an API server does; client-go's tracker cannot, over unstructured
// objects (it finds no patch metadata in them). A built-in kind is merged
// with its Go type's patch metadata; a custom resource refuses strategic
// merge patches (415) and takes applies as merge patches. Apply creates
// what does not exist. Field ownership is not emulated.
func (f *Fake) strategicPatch(action clienttesting.Action) (bool, runtime.Object, error) {
	patch, ok := action.(clienttesting.PatchActionImpl)
	if !ok || patch.GetPatchType() != types.StrategicMergePatchType && patch.GetPatchType() != types.ApplyPatchType {
		return false, nil, nil
	}
	data, err := utilyaml.ToJSON(patch.GetPatch())
	if err != nil {
		return true, nil, apierrors.NewBadRequest(err.Error())
	}
	gvr, ns, name := patch.GetResource(), patch.GetNamespace(), patch.GetName()
	current, err := f.client.Tracker().Get(gvr, ns, name)
	if apierrors.IsNotFound(err) && patch.GetPatchType() == types.ApplyPatchType {
		return f.applyCreate(gvr, ns, name, data)
	}
	if err != nil {
		return true, nil, err
	}
	goType, builtIn := f.goTypeOf(current.GetObjectKind().GroupVersionKind())
	switch {
	case !builtIn && patch.GetPatchType() == types.ApplyPatchType:
		patch.PatchType, patch.Patch = types.MergePatchType, data
		return clienttesting.ObjectReaction(f.store)(patch)
	case !builtIn:
		return true, nil, apierrors.NewGenericServerResponse(http.StatusUnsupportedMediaType, "patch", gvr.GroupResource(), name,
			"strategic merge patch is not supported for custom resources", 0, false)
	}
	merged, err := strategicMerge(current, data, goType)
	if err != nil {
		return true, nil, apierrors.NewBadRequest(err.Error())
	}
	return f.update(gvr, ns, merged)
}

// goTypeOf returns an object of the Go type of gvk, and whether gvk is a
// built-in kind with one: the kinds strategic merge patches apply to.
func (f *Fake) goTypeOf(gvk schema.GroupVersionKind) (runtime.Object, bool) {
	if gvk.Group != "" && !isBuiltInGroup(gvk.Group) {
		return nil, false
	}
	obj, err := f.scheme.New(gvk)
	if err != nil {
		return nil, false
	}
	return obj, true
}

func strategicMerge(current runtime.Object, patch []byte, goType runtime.Object) (*unstructured.Unstructured, error) {
	original, err := json.Marshal(current)
	if err != nil {
		return nil, err
	}
	merged, err := strategicpatch.StrategicMergePatch(original, patch, goType)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{}
	return u, u.UnmarshalJSON(merged)
}

// applyCreate creates, from an apply configuration, the object it names.
func (f *Fake) applyCreate(gvr schema.GroupVersionResource, ns, name string, data []byte) (bool, runtime.Object, error) {
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(data); err != nil {
		return true, nil, apierrors.NewBadRequest(err.Error())
	}
	u.SetName(name)
	if err := f.store.Create(gvr, u, ns); err != nil {
		return true, nil, err
	}
	stored, err := f.client.Tracker().Get(gvr, ns, name)
	return true, stored, err
}

// update stores obj, stamped, and returns what was stored.
func (f *Fake) update(gvr schema.GroupVersionResource, ns string, obj *unstructured.Unstructured) (bool, runtime.Object, error) {
	if err := f.store.Update(gvr, obj, ns); err != nil {
		return true, nil, err
	}
	stored, err := f.client.Tracker().Get(gvr, ns, obj.GetName())
	return true, stored, err
}

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
