package controller

import (
	"errors"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The owner references a reconcile sets on the objects it makes, as
// controller-runtime's controllerutil sets them (SetControllerReference,
// SetOwnerReference, with its "already owned" check), and the test of
// which object controls another (IsControlledBy). Owns maps an object to
// the key of its controller: the reference SetControllerReference sets.
// (The replicas' ownership of keys under a membership is another matter:
// ownership.go.)

// AlreadyOwnedError is the error of SetControllerReference when another
// owner is object's controller already: an object has at most one
// controller reference.
type AlreadyOwnedError struct {
	// Object is the object whose controller reference was to be set.
	Object metav1.Object
	// Owner is its controller reference already there.
	Owner metav1.OwnerReference
}

// Error names the object and its controller.
func (e *AlreadyOwnedError) Error() string {
	object := "<nil>"
	if !isNil(e.Object) {
		object = objectName(e.Object.GetNamespace(), e.Object.GetName())
	}
	return fmt.Sprintf("controller: object %s is already owned by another %s controller %s (apiVersion %s, UID %s)",
		object, e.Owner.Kind, e.Owner.Name, e.Owner.APIVersion, e.Owner.UID)
}

// SetControllerReference sets owner as the controller of object: an owner
// reference to owner with Controller and BlockOwnerDeletion true, so that
// the garbage collector deletes object with owner, and Owns enqueues
// owner's key on object's events. owner's apiVersion and kind are its
// GroupVersionKind in scheme (an *unstructured.Unstructured's or a
// *metav1.PartialObjectMetadata's own, which must be set; scheme may then
// be nil). A reference to the same object (same group, kind and name,
// whatever the version) is replaced in place; others are kept.
//
// It fails, and leaves object as it was, if object has another controller
// (an *AlreadyOwnedError), if owner is namespaced and object is
// cluster-scoped (has no namespace) or in another namespace (the garbage
// collector would take the reference as unresolvable; a cluster-scoped
// owner may own namespaced objects), if owner's GroupVersionKind is not
// known, or if owner, object or scheme is nil. It is
// controller-runtime's controllerutil.SetControllerReference, without
// options.
func SetControllerReference(owner, object metav1.Object, scheme *runtime.Scheme) error {
	ref, err := ownerReference("SetControllerReference", owner, object, scheme)
	if err != nil {
		return err
	}
	ref.BlockOwnerDeletion = new(true)
	ref.Controller = new(true)
	if existing := metav1.GetControllerOfNoCopy(object); existing != nil && !sameObject(*existing, ref) {
		return &AlreadyOwnedError{Object: object, Owner: *existing}
	}
	upsertOwnerReference(object, ref)
	return nil
}

// SetOwnerReference sets an owner reference to owner on object, not a
// controller one (Controller and BlockOwnerDeletion unset): object
// depends on owner, and is deleted with it, but owner does not control
// it. A reference to the same object (same group, kind and name, whatever
// the version) is replaced in place, a controller reference included; others
// are kept. It fails as SetControllerReference does, but for the check of
// another controller. It is controller-runtime's
// controllerutil.SetOwnerReference, without options.
func SetOwnerReference(owner, object metav1.Object, scheme *runtime.Scheme) error {
	ref, err := ownerReference("SetOwnerReference", owner, object, scheme)
	if err != nil {
		return err
	}
	upsertOwnerReference(object, ref)
	return nil
}

// IsControlledBy reports whether owner is object's controller: object has
// an owner reference with Controller true and owner's UID, as
// metav1.IsControlledBy; false if either is nil.
func IsControlledBy(object, owner metav1.Object) bool {
	if isNil(object) || isNil(owner) {
		return false
	}
	ref := metav1.GetControllerOfNoCopy(object)
	return ref != nil && ref.UID == owner.GetUID()
}

// ownerReference checks owner and object, and returns a reference to
// owner, neither a controller nor blocking.
func ownerReference(caller string, owner, object metav1.Object, scheme *runtime.Scheme) (metav1.OwnerReference, error) {
	switch {
	case isNil(owner):
		return metav1.OwnerReference{}, fmt.Errorf("controller: %s: nil owner", caller)
	case isNil(object):
		return metav1.OwnerReference{}, fmt.Errorf("controller: %s: nil object", caller)
	}
	ro, ok := owner.(runtime.Object)
	if !ok {
		return metav1.OwnerReference{}, fmt.Errorf("controller: %s: owner %T is not a runtime.Object", caller, owner)
	}
	if ns := owner.GetNamespace(); ns != "" {
		switch object.GetNamespace() {
		case "":
			return metav1.OwnerReference{}, fmt.Errorf("controller: %s: cluster-scoped object %s must not have a namespaced owner (%s)",
				caller, object.GetName(), objectName(ns, owner.GetName()))
		case ns:
		default:
			return metav1.OwnerReference{}, fmt.Errorf("controller: %s: cross-namespace owner references are disallowed: owner %s, object %s",
				caller, objectName(ns, owner.GetName()), objectName(object.GetNamespace(), object.GetName()))
		}
	}
	gvk, err := gvkOf(ro, scheme)
	if err != nil {
		return metav1.OwnerReference{}, fmt.Errorf("controller: %s: owner %s: %w", caller, objectName(owner.GetNamespace(), owner.GetName()), err)
	}
	return metav1.OwnerReference{
		APIVersion: gvk.GroupVersion().String(),
		Kind:       gvk.Kind,
		Name:       owner.GetName(),
		UID:        owner.GetUID(),
	}, nil
}

// gvkOf is obj's GroupVersionKind in scheme, as controller-runtime's
// apiutil.GVKForObject finds it: an unstructured or metadata-only
// object's own, which must be set; otherwise the one kind scheme has for
// obj's Go type, or of several the one obj's TypeMeta names.
func gvkOf(obj runtime.Object, scheme *runtime.Scheme) (schema.GroupVersionKind, error) {
	switch obj.(type) {
	case runtime.Unstructured, *metav1.PartialObjectMetadata:
		gvk := obj.GetObjectKind().GroupVersionKind()
		switch {
		case gvk.Kind == "":
			return schema.GroupVersionKind{}, runtime.NewMissingKindErr(fmt.Sprintf("%T has no kind", obj))
		case gvk.Version == "":
			return schema.GroupVersionKind{}, runtime.NewMissingVersionErr(fmt.Sprintf("%T has no version", obj))
		}
		return gvk, nil
	}
	if scheme == nil {
		return schema.GroupVersionKind{}, errors.New("nil scheme: the GroupVersionKind of a typed owner is its Go type's in a scheme")
	}
	gvks, unversioned, err := scheme.ObjectKinds(obj)
	switch {
	case err != nil:
		return schema.GroupVersionKind{}, err
	case unversioned:
		return schema.GroupVersionKind{}, fmt.Errorf("%T is an unversioned type, which no owner reference can name", obj)
	case len(gvks) == 1:
		return gvks[0], nil
	}
	// Several (len(gvks) == 0 is an error of ObjectKinds).
	if named := obj.GetObjectKind().GroupVersionKind(); !named.Empty() {
		for _, gvk := range gvks {
			if gvk == named {
				return gvk, nil
			}
		}
		return schema.GroupVersionKind{}, fmt.Errorf("%T is registered in the scheme as %v, not as the %v its TypeMeta names", obj, gvks, named)
	}
	return schema.GroupVersionKind{}, fmt.Errorf("%T is registered in the scheme as %v: set its TypeMeta to the one to use", obj, gvks)
}

// upsertOwnerReference replaces object's reference to the object ref
// names, or appends ref.
func upsertOwnerReference(object metav1.Object, ref metav1.OwnerReference) {
	refs := object.GetOwnerReferences()
	for i, r := range refs {
		if sameObject(r, ref) {
			refs[i] = ref
			object.SetOwnerReferences(refs)
			return
		}
	}
	object.SetOwnerReferences(append(refs, ref))
}

// sameObject reports whether a and b name the same object: group, kind and
// name, whatever the version (controller-runtime's referSameObject).
func sameObject(a, b metav1.OwnerReference) bool {
	aGV, err := schema.ParseGroupVersion(a.APIVersion)
	if err != nil {
		return false
	}
	bGV, err := schema.ParseGroupVersion(b.APIVersion)
	if err != nil {
		return false
	}
	return aGV.Group == bGV.Group && a.Kind == b.Kind && a.Name == b.Name
}
