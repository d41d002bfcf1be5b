package controller_test

import (
	"errors"
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/generic-informers/generic/controller"
	"github.com/generic-informers/generic/internal/widget"
)

func ownerWidget(namespace, name string, uid types.UID) *widget.Widget {
	return &widget.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, UID: uid}}
}

// ownedConfigMap is team-a/x with refs.
func ownedConfigMap(refs ...metav1.OwnerReference) *corev1.ConfigMap {
	cm := configMap("team-a", "x")
	cm.OwnerReferences = refs
	return cm
}

// widgetRef is a reference to Widget name, a controller one if controller.
func widgetRef(apiVersion, name string, uid types.UID, controller bool) metav1.OwnerReference {
	ref := metav1.OwnerReference{APIVersion: apiVersion, Kind: "Widget", Name: name, UID: uid}
	if controller {
		ref.Controller, ref.BlockOwnerDeletion = new(true), new(true)
	}
	return ref
}

// otherRef is a reference, not a controller one, to ConfigMap other.
var otherRef = metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "other", UID: "other-uid"}

// ownerRefCase is a case of SetControllerReference or SetOwnerReference:
// the owner reference set from owner on object, or an error.
type ownerRefCase struct {
	name   string
	owner  metav1.Object
	object func() metav1.Object // a new one for each call
	scheme *runtime.Scheme
	// wantRefs are object's references after the call, which on an
	// error are those it had.
	wantRefs []metav1.OwnerReference
	wantErr  string
	// wantOwner is the controller an *AlreadyOwnedError names.
	wantOwner *metav1.OwnerReference
}

// schemeName is the name of a scheme in an error: where runtime.NewScheme
// was called.
var schemeName = regexp.MustCompile(`in scheme "[^"]*"`)

func runOwnerRefCases(t *testing.T, set func(owner, object metav1.Object, scheme *runtime.Scheme) error, tests []ownerRefCase) {
	t.Helper()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			object := tc.object()
			err := set(tc.owner, object, tc.scheme)
			gotErr := ""
			if err != nil {
				gotErr = schemeName.ReplaceAllString(err.Error(), `in scheme "..."`)
			}
			if diff := cmp.Diff(tc.wantErr, gotErr); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			var owned *controller.AlreadyOwnedError
			if errors.As(err, &owned) != (tc.wantOwner != nil) {
				t.Errorf("error %v: an *AlreadyOwnedError is %v, want %v", err, owned != nil, tc.wantOwner != nil)
			} else if owned != nil {
				if diff := cmp.Diff(*tc.wantOwner, owned.Owner); diff != "" {
					t.Errorf("AlreadyOwnedError.Owner (-want +got):\n%s", diff)
				}
				if owned.Object != object {
					t.Errorf("AlreadyOwnedError.Object is %v, want the object", owned.Object)
				}
			}
			if object == nil || isNilObject(object) {
				return
			}
			if diff := cmp.Diff(tc.wantRefs, object.GetOwnerReferences()); diff != "" {
				t.Errorf("owner references (-want +got):\n%s", diff)
			}
		})
	}
}

func isNilObject(o metav1.Object) bool {
	cm, ok := o.(*corev1.ConfigMap)
	return ok && cm == nil
}

// The cases both setters share: bad input, and where an owner reference
// cannot point.
func sharedOwnerRefCases(caller string) []ownerRefCase {
	large := ownerWidget("team-a", "large", "large-uid")
	return []ownerRefCase{{
		name:    "cross-namespace",
		owner:   large,
		object:  func() metav1.Object { return configMap("team-b", "x") },
		scheme:  widget.NewScheme(),
		wantErr: "controller: " + caller + ": cross-namespace owner references are disallowed: owner team-a/large, object team-b/x",
	}, {
		name:    "a namespaced owner of a cluster-scoped object",
		owner:   large,
		object:  func() metav1.Object { return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}} },
		scheme:  widget.NewScheme(),
		wantErr: "controller: " + caller + ": cluster-scoped object team-a must not have a namespaced owner (team-a/large)",
	}, {
		name:    "an owner whose type the scheme does not know",
		owner:   large,
		object:  func() metav1.Object { return ownedConfigMap() },
		scheme:  runtime.NewScheme(),
		wantErr: `controller: ` + caller + `: owner team-a/large: no kind is registered for the type widget.Widget in scheme "..."`,
	}, {
		name:    "a typed owner and a nil scheme",
		owner:   large,
		object:  func() metav1.Object { return ownedConfigMap() },
		wantErr: "controller: " + caller + ": owner team-a/large: nil scheme: the GroupVersionKind of a typed owner is its Go type's in a scheme",
	}, {
		name:    "an unstructured owner without a kind",
		owner:   &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "metadata": map[string]any{"namespace": "team-a", "name": "large"}}},
		object:  func() metav1.Object { return ownedConfigMap() },
		wantErr: "controller: " + caller + ": owner team-a/large: Object 'Kind' is missing in '*unstructured.Unstructured has no kind'",
	}, {
		name:    "an owner that is not a runtime.Object",
		owner:   &metav1.ObjectMeta{Namespace: "team-a", Name: "large"},
		object:  func() metav1.Object { return ownedConfigMap() },
		scheme:  widget.NewScheme(),
		wantErr: "controller: " + caller + ": owner *v1.ObjectMeta is not a runtime.Object",
	}, {
		name:    "a nil owner",
		object:  func() metav1.Object { return ownedConfigMap() },
		scheme:  widget.NewScheme(),
		wantErr: "controller: " + caller + ": nil owner",
	}, {
		name:    "a nil *Widget owner",
		owner:   (*widget.Widget)(nil),
		object:  func() metav1.Object { return ownedConfigMap() },
		scheme:  widget.NewScheme(),
		wantErr: "controller: " + caller + ": nil owner",
	}, {
		name:    "a nil object",
		owner:   large,
		object:  func() metav1.Object { return nil },
		scheme:  widget.NewScheme(),
		wantErr: "controller: " + caller + ": nil object",
	}, {
		name:    "a nil *ConfigMap object",
		owner:   large,
		object:  func() metav1.Object { return (*corev1.ConfigMap)(nil) },
		scheme:  widget.NewScheme(),
		wantErr: "controller: " + caller + ": nil object",
	}}
}

// TestSetControllerReference: controller-runtime's
// controllerutil.SetControllerReference, case by case.
func TestSetControllerReference(t *testing.T) {
	large := ownerWidget("team-a", "large", "large-uid")
	other := widgetRef("example.com/v1", "small", "small-uid", true)
	tests := []ownerRefCase{{
		name:     "sets a controller reference, blocking the owner's deletion",
		owner:    large,
		object:   func() metav1.Object { return ownedConfigMap() },
		scheme:   widget.NewScheme(),
		wantRefs: []metav1.OwnerReference{widgetRef("example.com/v1", "large", "large-uid", true)},
	}, {
		name:     "keeps the other references",
		owner:    large,
		object:   func() metav1.Object { return ownedConfigMap(otherRef) },
		scheme:   widget.NewScheme(),
		wantRefs: []metav1.OwnerReference{otherRef, widgetRef("example.com/v1", "large", "large-uid", true)},
	}, {
		name:  "updates the reference to the same owner in place, whatever its version and UID",
		owner: large,
		object: func() metav1.Object {
			return ownedConfigMap(widgetRef("example.com/v1beta1", "large", "old-uid", true), otherRef)
		},
		scheme:   widget.NewScheme(),
		wantRefs: []metav1.OwnerReference{widgetRef("example.com/v1", "large", "large-uid", true), otherRef},
	}, {
		name:  "makes the owner's reference a controller one",
		owner: large,
		object: func() metav1.Object {
			return ownedConfigMap(otherRef, widgetRef("example.com/v1", "large", "large-uid", false))
		},
		scheme:   widget.NewScheme(),
		wantRefs: []metav1.OwnerReference{otherRef, widgetRef("example.com/v1", "large", "large-uid", true)},
	}, {
		name:      "already owned by another controller",
		owner:     large,
		object:    func() metav1.Object { return ownedConfigMap(otherRef, other) },
		scheme:    widget.NewScheme(),
		wantRefs:  []metav1.OwnerReference{otherRef, other},
		wantErr:   "controller: object team-a/x is already owned by another Widget controller small (apiVersion example.com/v1, UID small-uid)",
		wantOwner: &other,
	}, {
		name:     "a cluster-scoped owner of a namespaced object",
		owner:    &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a", UID: "ns-uid"}},
		object:   func() metav1.Object { return ownedConfigMap() },
		scheme:   widget.NewScheme(),
		wantRefs: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Namespace", Name: "team-a", UID: "ns-uid", Controller: new(true), BlockOwnerDeletion: new(true)}},
	}, {
		name: "an unstructured owner: its own kind, no scheme needed",
		owner: &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "Widget",
			"metadata": map[string]any{"namespace": "team-a", "name": "large", "uid": "large-uid"}}},
		object:   func() metav1.Object { return ownedConfigMap() },
		wantRefs: []metav1.OwnerReference{widgetRef("example.com/v1", "large", "large-uid", true)},
	}, {
		name: "a metadata-only owner: its own kind",
		owner: &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "example.com/v1", Kind: "Widget"},
			ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "large", UID: "large-uid"}},
		object:   func() metav1.Object { return ownedConfigMap() },
		scheme:   widget.NewScheme(),
		wantRefs: []metav1.OwnerReference{widgetRef("example.com/v1", "large", "large-uid", true)},
	}}
	for _, tc := range sharedOwnerRefCases("SetControllerReference") {
		if o := tc.object(); o != nil && !isNilObject(o) {
			tc.wantRefs = o.GetOwnerReferences() // left as they were
		}
		tests = append(tests, tc)
	}
	runOwnerRefCases(t, controller.SetControllerReference, tests)
}

// TestSetOwnerReference: controller-runtime's
// controllerutil.SetOwnerReference, case by case.
func TestSetOwnerReference(t *testing.T) {
	large := ownerWidget("team-a", "large", "large-uid")
	other := widgetRef("example.com/v1", "small", "small-uid", true)
	tests := []ownerRefCase{{
		name:     "sets a reference, not a controller one",
		owner:    large,
		object:   func() metav1.Object { return ownedConfigMap(otherRef) },
		scheme:   widget.NewScheme(),
		wantRefs: []metav1.OwnerReference{otherRef, widgetRef("example.com/v1", "large", "large-uid", false)},
	}, {
		name:     "beside another controller",
		owner:    large,
		object:   func() metav1.Object { return ownedConfigMap(other) },
		scheme:   widget.NewScheme(),
		wantRefs: []metav1.OwnerReference{other, widgetRef("example.com/v1", "large", "large-uid", false)},
	}, {
		name:  "replaces the reference to the same owner, a controller one included",
		owner: large,
		object: func() metav1.Object {
			return ownedConfigMap(widgetRef("example.com/v1", "large", "large-uid", true), otherRef)
		},
		scheme:   widget.NewScheme(),
		wantRefs: []metav1.OwnerReference{widgetRef("example.com/v1", "large", "large-uid", false), otherRef},
	}}
	for _, tc := range sharedOwnerRefCases("SetOwnerReference") {
		if o := tc.object(); o != nil && !isNilObject(o) {
			tc.wantRefs = o.GetOwnerReferences() // left as they were
		}
		tests = append(tests, tc)
	}
	runOwnerRefCases(t, controller.SetOwnerReference, tests)
}

// TestIsControlledBy: metav1.IsControlledBy, nil-safe.
func TestIsControlledBy(t *testing.T) {
	large := ownerWidget("team-a", "large", "large-uid")
	tests := []struct {
		name          string
		object, owner metav1.Object
		want          bool
	}{
		{"its controller", ownedConfigMap(otherRef, widgetRef("example.com/v1", "large", "large-uid", true)), large, true},
		{"a reference, not a controller one", ownedConfigMap(widgetRef("example.com/v1", "large", "large-uid", false)), large, false},
		{"another controller", ownedConfigMap(widgetRef("example.com/v1", "small", "small-uid", true)), large, false},
		{"another UID: the owner of the name was recreated", ownedConfigMap(widgetRef("example.com/v1", "large", "old-uid", true)), large, false},
		{"no references", ownedConfigMap(), large, false},
		{"a nil object", nil, large, false},
		{"a nil *ConfigMap object", (*corev1.ConfigMap)(nil), large, false},
		{"a nil owner", ownedConfigMap(widgetRef("example.com/v1", "large", "large-uid", true)), nil, false},
		{"a nil *Widget owner", ownedConfigMap(widgetRef("example.com/v1", "large", "large-uid", true)), (*widget.Widget)(nil), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := controller.IsControlledBy(tc.object, tc.owner); got != tc.want {
				t.Errorf("IsControlledBy = %v, want %v", got, tc.want)
			}
		})
	}
}
