// Package labeler is a small controller written on this library, with its
// tests written on generictest: it labels each ConfigMap a Widget references
// (spec.configMapName, in the Widget's namespace) with
// widgets.example.com/<widget name>: "true", and takes the label off when
// the Widget goes or stops referencing the ConfigMap.
//
// It is level-based: a Widget event only names the ConfigMaps to look at,
// and Reconcile works out a ConfigMap's labels from what the listers hold,
// so that a missed delete (a tombstone) or a changed reference needs no
// special case.
package labeler

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/internal/widget"
)

// LabelPrefix starts the key of the label a Widget puts on its ConfigMap.
const LabelPrefix = "widgets.example.com/"

var configMapsGVR = corev1.SchemeGroupVersion.WithResource("configmaps")

// Controller keeps the labels of ConfigMaps in step with the Widgets that
// reference them.
type Controller struct {
	widgets    generic.Lister[*widget.Widget]
	configMaps generic.Lister[*corev1.ConfigMap]
	client     dynamic.Interface
	queue      workqueue.TypedRateLimitingInterface[types.NamespacedName]
}

// New returns a Controller that reads the Widget and ConfigMap informers and
// patches ConfigMaps through client. Call Run to start it.
func New(widgets generic.Informer[*widget.Widget], configMaps generic.Informer[*corev1.ConfigMap], client dynamic.Interface) (*Controller, error) {
	c := &Controller{
		widgets:    widgets.Lister(),
		configMaps: configMaps.Lister(),
		client:     client,
		queue:      workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[types.NamespacedName]()),
	}
	_, err := widgets.AddEventHandler(cache.TypedResourceEventHandlerFuncs[*widget.Widget]{
		AddFunc:    c.enqueueReferenced,
		UpdateFunc: func(old, updated *widget.Widget) { c.enqueueReferenced(old); c.enqueueReferenced(updated) },
		// A delete carries the Widget's last known state, even when the
		// informer only learnt of it from a relist.
		DeleteFunc: func(deleted cache.DeletedObject[*widget.Widget]) {
			if deleted.OptionalObj != nil {
				c.enqueueReferenced(deleted.OptionalObj)
			}
		},
	})
	if err != nil {
		return nil, err
	}
	// A ConfigMap that appears (or changes) may be referenced already.
	_, err = configMaps.AddEventHandler(cache.TypedResourceEventHandlerFuncs[*corev1.ConfigMap]{
		AddFunc: func(cm *corev1.ConfigMap) { c.queue.Add(types.NamespacedName{Namespace: cm.Namespace, Name: cm.Name}) },
		UpdateFunc: func(_, cm *corev1.ConfigMap) {
			c.queue.Add(types.NamespacedName{Namespace: cm.Namespace, Name: cm.Name})
		},
	})
	return c, err
}

func (c *Controller) enqueueReferenced(w *widget.Widget) {
	if w.Spec.ConfigMapName != "" {
		c.queue.Add(types.NamespacedName{Namespace: w.Namespace, Name: w.Spec.ConfigMapName})
	}
}

// Run reconciles with workers goroutines until ctx ends, then returns when
// they have stopped.
func (c *Controller) Run(ctx context.Context, workers int) {
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() { wait.UntilWithContext(ctx, c.work, 0) })
	}
	<-ctx.Done()
	c.queue.ShutDown()
	wg.Wait()
}

func (c *Controller) work(ctx context.Context) {
	for {
		key, shutdown := c.queue.Get()
		if shutdown {
			return
		}
		if err := c.Reconcile(ctx, key); err != nil {
			klog.FromContext(ctx).Error(err, "Reconcile failed; retrying", "configmap", key.String())
			c.queue.AddRateLimited(key)
		} else {
			c.queue.Forget(key)
		}
		c.queue.Done(key)
	}
}

// Reconcile gives the ConfigMap key exactly the labels of the Widgets of its
// namespace that reference it. A ConfigMap that does not exist is left
// alone.
func (c *Controller) Reconcile(ctx context.Context, key types.NamespacedName) error {
	cm, err := c.configMaps.Namespace(key.Namespace).Get(key.Name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	widgets, err := c.widgets.Namespace(key.Namespace).List(labels.Everything())
	if err != nil {
		return err
	}
	want := map[string]bool{}
	for _, w := range widgets {
		if w.Spec.ConfigMapName == key.Name {
			want[LabelPrefix+w.Name] = true
		}
	}
	patch := labelPatch(cm.Labels, want)
	if patch == nil {
		return nil
	}
	data, err := json.Marshal(map[string]any{"metadata": map[string]any{"labels": patch}})
	if err != nil {
		return err
	}
	_, err = c.client.Resource(configMapsGVR).Namespace(key.Namespace).Patch(ctx, key.Name, types.MergePatchType, data, metav1.PatchOptions{})
	if err != nil {
		return fmt.Errorf("label ConfigMap %s: %w", key, err)
	}
	return nil
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
