package kwatch

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/generic-informers/generic/e2e/internal/cluster"
	"github.com/generic-informers/generic/internal/fixtures"
)

// The demo watches these resources, with this selector: the manifests of
// testdata/demo label their objects with it.
var demoResources = []string{"configmaps", "widgets.example.com"}

const demoSelector = "kwatch-demo=true"

var (
	configMapsGVR = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	widgetsGVR    = schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}
)

// stepTimeout bounds the wait for the event a step causes.
const stepTimeout = 30 * time.Second

// step is one change the demo makes and the event it must cause.
type step struct {
	describe string
	do       func(ctx context.Context) error
	expect   Event // Type, Resource and Key matter
}

// script is the demo's bounded churn: it runs its steps one at a time and
// waits, after each, until kwatch has printed the event it causes.
type script struct {
	c        *cluster.Cluster
	opts     Options
	steps    []step
	initial  map[string]int // resource -> objects in the manifests
	observed chan Event
}

// startDemo applies testdata/demo/ and returns the script to run once the
// informers have synced.
func startDemo(ctx context.Context, c *cluster.Cluster, opts Options) (*script, error) {
	s, objs, err := loadDemo(c, opts)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(opts.status(), "applying %d demo objects from %s\n", len(objs), filepath.Join(opts.Testdata, "demo"))
	if err := c.Apply(ctx, objs...); err != nil {
		return nil, err
	}
	return s, nil
}

// DemoExpected is the summary the demo must end with, sync times aside:
// what its manifests (in testdata/demo) and its script add up to.
func DemoExpected(testdata string) (Summary, error) {
	s, _, err := loadDemo(nil, Options{Testdata: testdata})
	if err != nil {
		return nil, err
	}
	return s.expected(), nil
}

// loadDemo reads the demo manifests and makes the script for them.
func loadDemo(c *cluster.Cluster, opts Options) (*script, []*unstructured.Unstructured, error) {
	paths, err := filepath.Glob(filepath.Join(opts.Testdata, "demo", "*.yaml"))
	if err != nil || len(paths) == 0 {
		return nil, nil, fmt.Errorf("no demo manifests in %s (run kwatch from the e2e folder, or set --testdata): %v", filepath.Join(opts.Testdata, "demo"), err)
	}
	objs, err := fixtures.Load(paths...)
	if err != nil {
		return nil, nil, err
	}
	s := &script{c: c, opts: opts, initial: map[string]int{}, observed: make(chan Event, 4096)}
	for _, obj := range objs {
		if obj.GetLabels()["kwatch-demo"] == "true" {
			s.initial[resourceName(obj)]++
		}
	}
	s.steps = s.churn()
	return s, objs, nil
}

func resourceName(obj *unstructured.Unstructured) string {
	switch obj.GetKind() {
	case "ConfigMap":
		return "configmaps"
	case "Widget":
		return "widgets.example.com"
	}
	return obj.GetKind()
}

// churn is the demo's script: creates, updates and deletes of both
// resources, a Widget delete among them, and a label change that moves a
// ConfigMap out of the selector (the informer sees it deleted).
func (s *script) churn() []step {
	return []step{
		s.create(configMapsGVR, "demo-shop", "promotions", map[string]any{"data": map[string]any{"spring": "20%"}}),
		s.patch(configMapsGVR, "demo-shop", "storefront", `{"data":{"theme":"light"}}`, Modified),
		s.create(widgetsGVR, "demo-lab", "flywheel", map[string]any{"spec": map[string]any{"size": int64(8), "color": "blue"}}),
		s.patch(widgetsGVR, "demo-shop", "gear", `{"spec":{"size":4}}`, Modified),
		s.delete(widgetsGVR, "demo-shop", "sprocket"),
		s.patch(configMapsGVR, "demo-lab", "scratch", `{"metadata":{"labels":{"kwatch-demo":"retired"}}}`, Deleted),
		s.delete(configMapsGVR, "demo-shop", "inventory"),
	}
}

func displayName(gvr schema.GroupVersionResource) string { return gvr.GroupResource().String() }

func (s *script) create(gvr schema.GroupVersionResource, namespace, name string, content map[string]any) step {
	obj := &unstructured.Unstructured{Object: content}
	obj.SetAPIVersion(gvr.GroupVersion().String())
	obj.SetKind(map[string]string{"configmaps": "ConfigMap", "widgets": "Widget"}[gvr.Resource])
	obj.SetNamespace(namespace)
	obj.SetName(name)
	obj.SetLabels(map[string]string{"kwatch-demo": "true"})
	return step{
		describe: fmt.Sprintf("create %s %s/%s", displayName(gvr), namespace, name),
		do: func(ctx context.Context) error {
			_, err := s.c.Dynamic.Resource(gvr).Namespace(namespace).Create(ctx, obj, metav1.CreateOptions{})
			return err
		},
		expect: Event{Type: Added, Resource: displayName(gvr), Namespace: namespace, Name: name},
	}
}

// patch merge-patches an object; it causes eventType: Modified, or Deleted
// when the patch moves the object out of the selector.
func (s *script) patch(gvr schema.GroupVersionResource, namespace, name, patch, eventType string) step {
	return step{
		describe: fmt.Sprintf("patch %s %s/%s with %s", displayName(gvr), namespace, name, patch),
		do: func(ctx context.Context) error {
			_, err := s.c.Dynamic.Resource(gvr).Namespace(namespace).Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
			return err
		},
		expect: Event{Type: eventType, Resource: displayName(gvr), Namespace: namespace, Name: name},
	}
}

func (s *script) delete(gvr schema.GroupVersionResource, namespace, name string) step {
	return step{
		describe: fmt.Sprintf("delete %s %s/%s", displayName(gvr), namespace, name),
		do: func(ctx context.Context) error {
			return s.c.Dynamic.Resource(gvr).Namespace(namespace).Delete(ctx, name, metav1.DeleteOptions{})
		},
		expect: Event{Type: Deleted, Resource: displayName(gvr), Namespace: namespace, Name: name},
	}
}

// observe hands the script an event kwatch printed.
func (s *script) observe(e Event) {
	select {
	case s.observed <- e:
	default: // the script is not waiting for more
	}
}

// run runs the steps in a goroutine; the channel gets nil when every step
// caused its event, or the error that stopped it.
func (s *script) run(ctx context.Context) <-chan error {
	done := make(chan error, 1)
	go func() { done <- s.runSteps(ctx) }()
	return done
}

func (s *script) runSteps(ctx context.Context) error {
	for i, st := range s.steps {
		fmt.Fprintf(s.opts.status(), "demo step %d/%d: %s\n", i+1, len(s.steps), st.describe)
		if err := st.do(ctx); err != nil {
			return fmt.Errorf("demo step %q: %w", st.describe, err)
		}
		if err := s.waitFor(ctx, st.expect); err != nil {
			return fmt.Errorf("demo step %q: %w", st.describe, err)
		}
	}
	return nil
}

// waitFor waits until kwatch has printed an event like want.
func (s *script) waitFor(ctx context.Context, want Event) error {
	timeout := time.NewTimer(stepTimeout)
	defer timeout.Stop()
	for {
		select {
		case e := <-s.observed:
			if e.Type == want.Type && e.Resource == want.Resource && e.Key() == want.Key() {
				return nil
			}
		case <-timeout.C:
			return fmt.Errorf("no %s event for %s %s within %v", want.Type, want.Resource, want.Key(), stepTimeout)
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
}

// expected is the summary the script must produce: per resource, the
// objects left in the cache and the events it caused.
func (s *script) expected() Summary {
	var expected Summary
	for _, name := range demoResources {
		r := ResourceSummary{Resource: name, Cached: s.initial[name]}
		for _, st := range s.steps {
			if st.expect.Resource != name {
				continue
			}
			switch st.expect.Type {
			case Added:
				r.Added++
				r.Cached++
			case Modified:
				r.Modified++
			case Deleted:
				r.Deleted++
				r.Cached--
			}
		}
		expected = append(expected, r)
	}
	return expected
}
