// Package labeler is a small controller written on this library, with its
// tests written on generictest: it labels each ConfigMap a Widget references
// (spec.configMapName, in the Widget's namespace) with
// widgets.example.com/<widget name>: "true", and takes the label off when
// the Widget goes or stops referencing the ConfigMap.
//
// It runs on the library's controller loop (package controller) and
// patches through a typed.Client. It is level-based: a Widget event only
// names the ConfigMaps to look at, and Reconcile works out a ConfigMap's labels from what the listers hold,
// so that a missed delete (a tombstone) or a changed reference needs no
// special case.
package labeler

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/controller"
	"github.com/generic-informers/generic/internal/widget"
	"github.com/generic-informers/generic/typed"
)

// LabelPrefix starts the key of the label a Widget puts on its ConfigMap.
const LabelPrefix = "widgets.example.com/"

// New returns the labeler's controller (package controller): it reconciles
// ConfigMaps, and a Widget event reconciles the ConfigMaps the Widget
// references, before and after an update. It patches ConfigMaps through
// client. opts are the controller's (workers, rate limiter, metrics).
func New(widgets generic.Informer[*widget.Widget], configMaps generic.Informer[*corev1.ConfigMap], client *typed.Client[*corev1.ConfigMap], opts ...controller.Option) (*controller.Controller, error) {
	r := &Reconciler{Widgets: widgets.Lister(), ConfigMaps: configMaps.Lister(), Client: client}
	return controller.New("labeler", controller.For(configMaps), r.Reconcile,
		append(opts, controller.Watches(widgets, referenced))...)
}

// referenced is the ConfigMap a Widget references, if any.
func referenced(w *widget.Widget) []cache.ObjectName {
	if w.Spec.ConfigMapName == "" {
		return nil
	}
	return []cache.ObjectName{{Namespace: w.Namespace, Name: w.Spec.ConfigMapName}}
}

// Reconciler keeps the labels of ConfigMaps in step with the Widgets that
// reference them.
type Reconciler struct {
	Widgets    generic.Lister[*widget.Widget]
	ConfigMaps generic.Lister[*corev1.ConfigMap]
	Client     *typed.Client[*corev1.ConfigMap]
}

// Reconcile gives the ConfigMap key exactly the labels of the Widgets of its
// namespace that reference it. A ConfigMap that does not exist is left
// alone.
func (r *Reconciler) Reconcile(ctx context.Context, key cache.ObjectName) (controller.Result, error) {
	cm, err := r.ConfigMaps.Namespace(key.Namespace).Get(key.Name)
	if apierrors.IsNotFound(err) {
		return controller.Result{}, nil
	}
	if err != nil {
		return controller.Result{}, err
	}
	widgets, err := r.Widgets.Namespace(key.Namespace).List(labels.Everything())
	if err != nil {
		return controller.Result{}, err
	}
	want := map[string]bool{}
	for _, w := range widgets {
		if w.Spec.ConfigMapName == key.Name {
			want[LabelPrefix+w.Name] = true
		}
	}
	patch := labelPatch(cm.Labels, want)
	if patch == nil {
		return controller.Result{}, nil
	}
	data, err := json.Marshal(map[string]any{"metadata": map[string]any{"labels": patch}})
	if err != nil {
		return controller.Result{}, err
	}
	if _, err := r.Client.Patch(ctx, key, types.MergePatchType, data, metav1.PatchOptions{}); err != nil {
		return controller.Result{}, fmt.Errorf("label ConfigMap %s: %w", key, err)
	}
	return controller.Result{}, nil
}

// labelPatch is the merge patch of labels that takes have to want (values
// "true" to add, nil to remove our labels), or nil if there is nothing to
// do.
func labelPatch(have map[string]string, want map[string]bool) map[string]any {
	patch := map[string]any{}
	for k := range want {
		if have[k] != "true" {
			patch[k] = "true"
		}
	}
	for k := range have {
		if strings.HasPrefix(k, LabelPrefix) && !want[k] {
			patch[k] = nil
		}
	}
	if len(patch) == 0 {
		return nil
	}
	return patch
}
