package controller_test

import (
	"errors"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/generic-informers/generic/controller"
)

// A reconcile sets its primary as the controller of each object it makes,
// before it creates it: the garbage collector deletes the object with the
// primary, and controller.Owns maps the object's events to the primary's
// key. An object has at most one controller.
func ExampleSetControllerReference() {
	web := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "web", UID: "6d1c0b1e"}}
	settings := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "web-settings"}}
	if err := controller.SetControllerReference(web, settings, scheme.Scheme); err != nil {
		fmt.Println(err)
		return
	}
	ref := settings.OwnerReferences[0]
	fmt.Println(ref.APIVersion, ref.Kind, ref.Name, *ref.Controller, *ref.BlockOwnerDeletion)
	fmt.Println(controller.IsControlledBy(settings, web))

	api := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "api", UID: "91f0c2aa"}}
	err := controller.SetControllerReference(api, settings, scheme.Scheme)
	var owned *controller.AlreadyOwnedError
	if errors.As(err, &owned) {
		fmt.Println("already controlled by", owned.Owner.Name)
	}
	// Output:
	// apps/v1 Deployment web true true
	// true
	// already controlled by web
}
