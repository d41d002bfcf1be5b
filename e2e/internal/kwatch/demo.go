package kwatch

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
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

// step is one change the demo makes and the events it must cause.
type step struct {
	describe string
	do       func(ctx context.Context) error
	// expect are the events the step causes, in any order: of each, Type,
	// Resource, Key and (for STATE events) State matter.
	expect []Event
}

// script is the demo's bounded churn: it runs its steps one at a time and
// waits, after each, until kwatch has printed the event it causes.
type script struct {
	c        *cluster.Cluster
	opts     Options
	steps    []step
	objs     []*unstructured.Unstructured // the demo manifests
	initial  map[string]int               // resource -> objects in the manifests
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
	if opts.DemoObjects > 0 {
		started := time.Now()
		if err := createBulk(ctx, c, opts.DemoObjects); err != nil {
			return nil, err
		}
		fmt.Fprintf(opts.status(), "created %d more ConfigMaps in %s in %v\n", opts.DemoObjects, bulkNamespace, time.Since(started).Round(time.Millisecond))
	}
	return s, nil
}

// bulkNamespace holds the demo's extra ConfigMaps (Options.DemoObjects).
const bulkNamespace = "demo-lab"

// createBulk creates n ConfigMaps bulk-00000, ... labelled for the demo,
// eight at a time.
func createBulk(ctx context.Context, c *cluster.Cluster, n int) error {
	const workers = 8
	names := make(chan int)
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := range names {
				obj := &unstructured.Unstructured{Object: map[string]any{
					"apiVersion": "v1", "kind": "ConfigMap",
					"data": map[string]any{"index": strconv.Itoa(i)},
				}}
				obj.SetNamespace(bulkNamespace)
				obj.SetName(fmt.Sprintf("bulk-%05d", i))
				obj.SetLabels(map[string]string{"kwatch-demo": "true"})
				if _, err := c.Dynamic.Resource(configMapsGVR).Namespace(bulkNamespace).Create(ctx, obj, metav1.CreateOptions{}); err != nil {
					errs <- fmt.Errorf("creating %s/%s: %w", bulkNamespace, obj.GetName(), err)
					return
				}
			}
		})
	}
	var err error
feed:
	for i := range n {
		select {
		case names <- i:
		case err = <-errs:
			break feed
		}
	}
	close(names)
	wg.Wait()
	if err == nil {
		select {
		case err = <-errs:
		default:
		}
	}
	return err
}

// DemoExpected is the summary the demo must end with, sync times aside:
// what its manifests (in testdata/demo), demoObjects more ConfigMaps
// (Options.DemoObjects) and its script add up to.
func DemoExpected(testdata string, demoObjects int) (Summary, error) {
	s, _, err := loadDemo(nil, Options{Testdata: testdata, DemoObjects: demoObjects})
	if err != nil {
		return nil, err
	}
	return s.expected(), nil
}

// DemoInitial is how many objects of each resource the demo holds when
// kwatch starts watching: those of its manifests, and demoObjects more
// ConfigMaps.
func DemoInitial(testdata string, demoObjects int) (map[string]int, error) {
	s, _, err := loadDemo(nil, Options{Testdata: testdata, DemoObjects: demoObjects})
	if err != nil {
		return nil, err
	}
	return s.initial, nil
}

// loadDemo reads the demo manifests and makes the script for them.
func loadDemo(c *cluster.Cluster, opts Options) (*script, []*unstructured.Unstructured, error) {
	paths, err := filepath.Glob(filepath.Join(opts.Testdata, "demo", "*.yaml"))
	if err != nil || len(paths) == 0 {
		return nil, nil, fmt.Errorf("no demo manifests in %s (run kwatch from the e2e folder, or set --testdata): %w", filepath.Join(opts.Testdata, "demo"), err)
	}
	objs, err := fixtures.Load(paths...)
	if err != nil {
		return nil, nil, err
	}
	s := &script{c: c, opts: opts, objs: objs, initial: map[string]int{}, observed: make(chan Event, 4096)}
	for _, obj := range objs {
		if obj.GetLabels()["kwatch-demo"] == "true" {
			s.initial[resourceName(obj)]++
		}
	}
	s.initial["configmaps"] += opts.DemoObjects
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
// resources, a Widget delete among them, a label change that moves a
// ConfigMap out of the selector (the informer sees it deleted), then the
// Widget CRD deleted under the running informer (its Widgets deleted, the
// informer NotServed) and re-created with its Widgets (served again: the
// informer relists by itself).
func (s *script) churn() []step {
	return []step{
		s.create(configMapsGVR, "demo-shop", "promotions", map[string]any{"data": map[string]any{"spring": "20%"}}),
		s.patch(configMapsGVR, "demo-shop", "storefront", `{"data":{"theme":"light"}}`, Modified),
		s.create(widgetsGVR, "demo-lab", "flywheel", map[string]any{"spec": map[string]any{"size": int64(8), "color": "blue"}}),
		s.patch(widgetsGVR, "demo-shop", "gear", `{"spec":{"size":4}}`, Modified),
		s.delete(widgetsGVR, "demo-shop", "sprocket"),
		s.patch(configMapsGVR, "demo-lab", "scratch", `{"metadata":{"labels":{"kwatch-demo":"retired"}}}`, Deleted),
		s.delete(configMapsGVR, "demo-shop", "inventory"),
		s.deleteCRD(),
		s.recreateCRD(),
	}
}

const widgetsCRD = "widgets.example.com"

// deleteCRD deletes the Widget CRD: the Widgets left (gear, cog, flywheel)
// go with it.
func (s *script) deleteCRD() step {
	resource := displayName(widgetsGVR)
	return step{
		describe: "delete the CustomResourceDefinition " + widgetsCRD,
		do:       func(ctx context.Context) error { return s.c.DeleteCRD(ctx, widgetsCRD) },
		expect: []Event{
			{Type: Deleted, Resource: resource, Namespace: "demo-shop", Name: "gear"},
			{Type: Deleted, Resource: resource, Namespace: "demo-lab", Name: "cog"},
			{Type: Deleted, Resource: resource, Namespace: "demo-lab", Name: "flywheel"},
			{Type: StateChanged, Resource: resource, State: "NotServed"},
		},
	}
}

// recreateCRD applies the CRD and the Widgets of the demo manifests again.
func (s *script) recreateCRD() step {
	resource := displayName(widgetsGVR)
	var objs []*unstructured.Unstructured
	expect := []Event{{Type: StateChanged, Resource: resource, State: "Synced"}}
	for _, obj := range s.objs {
		switch {
		case obj.GetKind() == "CustomResourceDefinition":
			objs = append(objs, obj)
		case resourceName(obj) == resource:
			objs = append(objs, obj)
			expect = append(expect, Event{Type: Added, Resource: resource, Namespace: obj.GetNamespace(), Name: obj.GetName()})
		}
	}
	return step{
		describe: "re-create the CustomResourceDefinition " + widgetsCRD + " and its Widgets",
		do:       func(ctx context.Context) error { return s.c.Apply(ctx, objs...) },
		expect:   expect,
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
		expect: []Event{{Type: Added, Resource: displayName(gvr), Namespace: namespace, Name: name}},
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
		expect: []Event{{Type: eventType, Resource: displayName(gvr), Namespace: namespace, Name: name}},
	}
}

func (s *script) delete(gvr schema.GroupVersionResource, namespace, name string) step {
	return step{
		describe: fmt.Sprintf("delete %s %s/%s", displayName(gvr), namespace, name),
		do: func(ctx context.Context) error {
			return s.c.Dynamic.Resource(gvr).Namespace(namespace).Delete(ctx, name, metav1.DeleteOptions{})
		},
		expect: []Event{{Type: Deleted, Resource: displayName(gvr), Namespace: namespace, Name: name}},
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

// waitFor waits until kwatch has printed events like each of want, in any
// order.
func (s *script) waitFor(ctx context.Context, want []Event) error {
	pending := map[string]int{}
	for _, e := range want {
		pending[matchKey(e)]++
	}
	timeout := time.NewTimer(stepTimeout)
	defer timeout.Stop()
	for len(pending) > 0 {
		select {
		case e := <-s.observed:
			if k := matchKey(e); pending[k] > 0 {
				if pending[k]--; pending[k] == 0 {
					delete(pending, k)
				}
			}
		case <-timeout.C:
			return fmt.Errorf("still waiting for %v after %v", keys(pending), stepTimeout)
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
	return nil
}

// matchKey is what must match between an expected and a printed event.
func matchKey(e Event) string {
	return e.Type + " " + e.Resource + " " + e.Key() + " " + e.State
}

func keys(m map[string]int) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// expected is the summary the script must produce: per resource, the
// objects left in the cache and the events it caused.
func (s *script) expected() Summary {
	var expected Summary
	for _, name := range demoResources {
		r := ResourceSummary{Resource: name, Cached: s.initial[name], State: "Synced"}
		for _, st := range s.steps {
			for _, e := range st.expect {
				if e.Resource != name {
					continue
				}
				switch e.Type {
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
		}
		expected = append(expected, r)
	}
	return expected
}
