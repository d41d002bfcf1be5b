package generictest

import (
	"net/http"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	clienttesting "k8s.io/client-go/testing"
)

// The write reactors serve the fake client's updates, patches and
// collection deletes through the stamping tracker, with the subresource
// each names (which client-go's ObjectReaction drops): an update or a
// patch of "status" is one of the status subresource; any other
// subresource is written as the main resource, as client-go's fake does.
// Creates and deletes reach the tracker through ObjectReaction.

// subresourceOf is how the tracker writes a request of subresource.
func subresourceOf(subresource string) string {
	if subresource == "status" {
		return "status"
	}
	return ""
}

// updateReaction serves updates, of the main resource and of its status.
func (f *Fake) updateReaction(action clienttesting.Action) (bool, runtime.Object, error) {
	update, ok := action.(clienttesting.UpdateActionImpl)
	if !ok {
		return false, nil, nil
	}
	stored, err := f.store.update(update.GetResource(), update.GetObject(), update.GetNamespace(), subresourceOf(update.GetSubresource()))
	if err != nil {
		return true, nil, err
	}
	return true, stored, nil
}

// patchReaction serves every patch type as an API server does, of the main
// resource and of its status: JSON patches, merge patches, strategic merge
// patches and server-side applies. A built-in kind is merged with its Go
// type's patch metadata; a custom resource refuses strategic merge patches
// (415) and takes applies as merge patches. Apply creates what does not
// exist. Field ownership is not emulated. The patched object is written
// as an update, with the same checks (a resourceVersion the patch sets
// must be the stored one).
func (f *Fake) patchReaction(action clienttesting.Action) (bool, runtime.Object, error) {
	patch, ok := action.(clienttesting.PatchActionImpl)
	if !ok {
		return false, nil, nil
	}
	gvr, ns, name := patch.GetResource(), patch.GetNamespace(), patch.GetName()
	subresource := subresourceOf(patch.GetSubresource())
	data := patch.GetPatch()
	if patch.GetPatchType() == types.ApplyPatchType {
		var err error
		if data, err = utilyaml.ToJSON(data); err != nil {
			return true, nil, apierrors.NewBadRequest(err.Error())
		}
	}
	stored, err := f.store.patch(gvr, ns, name, subresource, func(current *unstructured.Unstructured) (*unstructured.Unstructured, error) {
		return f.patched(gvr, current, patch.GetPatchType(), data)
	})
	if apierrors.IsNotFound(err) && patch.GetPatchType() == types.ApplyPatchType && subresource == "" {
		return f.applyCreate(gvr, ns, name, data)
	}
	if err != nil {
		return true, nil, err
	}
	return true, stored, nil
}

// patched returns current with patch applied.
func (f *Fake) patched(gvr schema.GroupVersionResource, current *unstructured.Unstructured, pt types.PatchType, patch []byte) (*unstructured.Unstructured, error) {
	original, err := current.MarshalJSON()
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	goType, builtIn := f.goTypeOf(current.GroupVersionKind())
	var modified []byte
	switch {
	case pt == types.JSONPatchType:
		decoded, err := jsonpatch.DecodePatch(patch)
		if err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
		if modified, err = decoded.Apply(original); err != nil {
			return nil, apierrors.NewGenericServerResponse(http.StatusUnprocessableEntity, "patch", gvr.GroupResource(), current.GetName(), err.Error(), 0, false)
		}
	case pt == types.MergePatchType, pt == types.ApplyPatchType && !builtIn:
		if modified, err = jsonpatch.MergePatch(original, patch); err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
	case (pt == types.StrategicMergePatchType || pt == types.ApplyPatchType) && builtIn:
		if modified, err = strategicpatch.StrategicMergePatch(original, patch, goType); err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
	case pt == types.StrategicMergePatchType:
		return nil, apierrors.NewGenericServerResponse(http.StatusUnsupportedMediaType, "patch", gvr.GroupResource(), current.GetName(),
			"strategic merge patch is not supported for custom resources", 0, false)
	default:
		return nil, apierrors.NewGenericServerResponse(http.StatusUnsupportedMediaType, "patch", gvr.GroupResource(), current.GetName(),
			"patch type "+string(pt)+" is not supported", 0, false)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(modified); err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	return u, nil
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

// applyCreate creates, from an apply configuration, the object it names.
func (f *Fake) applyCreate(gvr schema.GroupVersionResource, ns, name string, data []byte) (bool, runtime.Object, error) {
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(data); err != nil {
		return true, nil, apierrors.NewBadRequest(err.Error())
	}
	u.SetName(name)
	u.SetResourceVersion("")
	if err := f.store.Create(gvr, u, ns); err != nil {
		return true, nil, err
	}
	stored, err := f.client.Tracker().Get(gvr, ns, name)
	return true, stored, err
}

// deleteCollection serves a delete of every object a list of the same
// options would show, each through the tracker, as deletes of their own
// (client-go's ObjectReaction serves none).
func (f *Fake) deleteCollection(action clienttesting.Action) (bool, runtime.Object, error) {
	deletes, ok := action.(clienttesting.DeleteCollectionActionImpl)
	if !ok {
		return false, nil, nil
	}
	gvr, ns := deletes.GetResource(), deletes.GetNamespace()
	sel, err := selectionOf(ns, deletes.ListOptions)
	if err != nil {
		return true, nil, apierrors.NewBadRequest(err.Error())
	}
	gvk, err := f.mapper.KindFor(gvr)
	if err != nil {
		return true, nil, err
	}
	list, err := f.client.Tracker().List(gvr, gvk, ns)
	if err != nil {
		return true, nil, err
	}
	for _, item := range list.(*unstructured.UnstructuredList).Items {
		if !sel.served(&item) {
			continue
		}
		err := f.store.Delete(gvr, item.GetNamespace(), item.GetName(), deletes.DeleteOptions)
		if err != nil && !apierrors.IsNotFound(err) {
			return true, nil, err
		}
	}
	return true, nil, nil
}
