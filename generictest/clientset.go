package generictest

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	kubefake "k8s.io/client-go/kubernetes/fake"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	clienttesting "k8s.io/client-go/testing"
)

// Clientset returns a fake typed clientset (a kubernetes.Interface) over
// the Fake's one store, for code under test that reads and writes through
// client-go's typed clients. Each of its requests is served by the fake
// dynamic client (Dynamic), its objects converted to unstructured and back:
// a write is checked and stamped as an API server's (see the package
// documentation) and reaches the Fake's informers through their list and
// watch, as the Fake's own changes and the dynamic client's writes do; a
// read sees what they wrote; its watches stop during WithoutWatch as the
// informers' do. Its writes do not wait for handlers: Settle does, or wait
// for their outcome with WaitFor or WaitForState.
//
// Reactors added to the clientset run first, for failures the test
// injects; reactors added to Dynamic serve the clientset's requests too.
// Its Tracker is not the Fake's store and holds nothing; seed with Objects
// or Files. Its Discovery knows no resources.
func (f *Fake) Clientset() *kubefake.Clientset {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.clientset == nil {
		f.clientset = kubefake.NewSimpleClientset()
		f.clientset.PrependReactor("*", "*", f.forward)
		f.clientset.PrependWatchReactor("*", f.forwardWatch)
	}
	return f.clientset
}

// forward serves a request of the typed clientset through the dynamic
// client: objects go in unstructured, and come back as the clientset's Go
// types, which it requires.
func (f *Fake) forward(action clienttesting.Action) (bool, runtime.Object, error) {
	if create, ok := action.(clienttesting.CreateActionImpl); ok && create.GetSubresource() != "" && !f.sameKind(create) {
		// A subresource of another kind (an Eviction, a TokenRequest)
		// changes nothing stored, as in client-go's fake clientset.
		return true, create.GetObject(), nil
	}
	forwarded, err := unstructuredAction(action)
	if err != nil {
		return true, nil, err
	}
	obj, err := f.client.Invokes(forwarded, nil)
	if err != nil || obj == nil {
		return true, nil, err
	}
	typed, err := f.typedFor(obj, action.GetResource())
	return true, typed, err
}

// forwardWatch serves a watch of the typed clientset with a watch of the
// dynamic client, converting what it delivers.
func (f *Fake) forwardWatch(action clienttesting.Action) (bool, watch.Interface, error) {
	inner, err := f.client.InvokesWatch(action)
	if err != nil {
		return true, nil, err
	}
	return true, newTypedWatch(inner, func(obj runtime.Object) (runtime.Object, error) {
		return f.typedFor(obj, action.GetResource())
	}), nil
}

// sameKind reports whether a subresource create carries an object of its
// resource's kind (as a scale or a status would).
func (f *Fake) sameKind(create clienttesting.CreateActionImpl) bool {
	gvks, _, err := clientgoscheme.Scheme.ObjectKinds(create.GetObject())
	if err != nil {
		return false
	}
	gvk, err := f.mapper.KindFor(create.GetResource())
	return err == nil && gvks[0] == gvk
}

// unstructuredAction returns action with its object, if any, as
// unstructured.
func unstructuredAction(action clienttesting.Action) (clienttesting.Action, error) {
	switch a := action.(type) {
	case clienttesting.CreateActionImpl:
		obj, err := toUnstructuredIn(clientgoscheme.Scheme, a.Object)
		a.Object = obj
		return a, err
	case clienttesting.UpdateActionImpl:
		obj, err := toUnstructuredIn(clientgoscheme.Scheme, a.Object)
		a.Object = obj
		return a, err
	}
	return action, nil
}

// typedFor returns obj, served for resource gvr, as the clientset's Go
// type: an object of its kind, or a list of them.
func (f *Fake) typedFor(obj runtime.Object, gvr schema.GroupVersionResource) (runtime.Object, error) {
	var content map[string]any
	var gvk schema.GroupVersionKind
	switch u := obj.(type) {
	case *unstructured.Unstructured:
		content, gvk = u.Object, u.GroupVersionKind()
	case *unstructured.UnstructuredList:
		kind, err := f.mapper.KindFor(gvr)
		if err != nil {
			return nil, err
		}
		content, gvk = u.UnstructuredContent(), kind.GroupVersion().WithKind(kind.Kind+"List")
	default:
		return obj, nil // already typed, as a metav1.Status is
	}
	typed, err := clientgoscheme.Scheme.New(gvk)
	if err != nil {
		return nil, fmt.Errorf("generictest: the typed clientset has no Go type for %v: %w", gvk, err)
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(content, typed); err != nil {
		return nil, fmt.Errorf("generictest: %v as %T: %w", gvk, typed, err)
	}
	return typed, nil
}
