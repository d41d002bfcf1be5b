package generictest

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// Create creates obj (of a Go type in the scheme, or unstructured) through
// the fake client and returns, as unstructured, what was stored, once every
// handler registered through the Fake's informers has seen it (or, for a
// typed informer that could not convert it, once it was reported). Errors
// fail the test.
func (f *Fake) Create(obj runtime.Object) *unstructured.Unstructured {
	f.t.Helper()
	return f.write(obj, func(r dynamic.ResourceInterface, u *unstructured.Unstructured) (*unstructured.Unstructured, error) {
		return r.Create(context.Background(), u, metav1.CreateOptions{})
	})
}

// Update replaces obj through the fake client, as Create does, as an API
// server would: a resourceVersion obj sets must be the stored one (else the
// test fails with the 409 Conflict), the generation grows if anything but
// metadata changes, an object with a status subresource keeps its
// stored status (set it with UpdateStatus), and an update that changes
// nothing is no write: it returns the object as stored, at its
// resourceVersion, at once, and no handler is told of it.
func (f *Fake) Update(obj runtime.Object) *unstructured.Unstructured {
	f.t.Helper()
	return f.write(obj, func(r dynamic.ResourceInterface, u *unstructured.Unstructured) (*unstructured.Unstructured, error) {
		return r.Update(context.Background(), u, metav1.UpdateOptions{})
	})
}

// UpdateStatus replaces the status of obj through the fake client's status
// subresource, as Update does: only the status changes. It fails the test
// if obj's resource has no status subresource (a custom resource whose CRD
// fixture declares none, or that has no CRD fixture).
func (f *Fake) UpdateStatus(obj runtime.Object) *unstructured.Unstructured {
	f.t.Helper()
	return f.write(obj, func(r dynamic.ResourceInterface, u *unstructured.Unstructured) (*unstructured.Unstructured, error) {
		return r.UpdateStatus(context.Background(), u, metav1.UpdateOptions{})
	})
}

// Delete deletes obj (only its kind, namespace and name matter) through the
// fake client, and returns once every handler has seen it go.
func (f *Fake) Delete(obj runtime.Object) {
	f.t.Helper()
	u, gvr, resource := f.resolve(obj)
	rejected := f.seen.rejectedCount(gvr, keyOf(u))
	// Its last state, whose resourceVersion tells a handler that has it
	// still from one that has it again.
	stored, err := f.client.Tracker().Get(gvr, u.GetNamespace(), u.GetName())
	if err != nil {
		f.t.Fatalf("generictest: delete %s: %v", keyOf(u), err)
	}
	last, ok := stored.(*unstructured.Unstructured)
	if !ok {
		last = u
	}
	if err := resource.Delete(context.Background(), u.GetName(), metav1.DeleteOptions{}); err != nil {
		f.t.Fatalf("generictest: delete %s: %v", keyOf(u), err)
	}
	if !f.unsettled {
		f.settle("the delete", []expectation{f.seen.expect(gvr, last, keyOf(u), false, rejected)})
	}
}

// WithoutWatch makes the changes of change unseen by the informers' watches,
// as during a watch outage, then ends their watches with 410 Gone: they
// relist, and find what changed. Objects deleted in change reach handlers as
// deletes with the tombstone (cache.DeletedObject.FinalStateUnknown) and
// their last known state; as after any relist in client-go, every object
// still there reaches them as an update. It returns once every handler has
// caught up.
// Make the changes through the Fake (Create, Update, Delete) or its
// clients (Dynamic, Clientset).
func (f *Fake) WithoutWatch(change func()) {
	f.t.Helper()
	f.waitWatching()
	before := f.snapshot()
	f.watches.pause()
	f.unsettled = true
	change()
	f.unsettled = false
	after := f.snapshot()
	expectations := f.relisted(before, after)
	f.watches.expire()
	f.settle("the relist", expectations)
	f.waitWatching()
}

func (f *Fake) write(obj runtime.Object, do func(dynamic.ResourceInterface, *unstructured.Unstructured) (*unstructured.Unstructured, error)) *unstructured.Unstructured {
	f.t.Helper()
	u, gvr, resource := f.resolve(obj)
	rejected := f.seen.rejectedCount(gvr, keyOf(u))
	stored, err := do(resource, u)
	if err != nil {
		f.t.Fatalf("generictest: %s: %v", keyOf(u), err)
	}
	if !f.unsettled {
		f.settle("the change", []expectation{f.seen.expect(gvr, stored, keyOf(stored), true, rejected)})
	}
	return stored
}

// resolve returns obj as unstructured, its resource and the fake client of
// that resource in obj's namespace.
func (f *Fake) resolve(obj runtime.Object) (*unstructured.Unstructured, schema.GroupVersionResource, dynamic.ResourceInterface) {
	f.t.Helper()
	u, err := f.toUnstructured(obj)
	if err != nil {
		f.t.Fatalf("generictest: %v", err)
	}
	mapping, err := f.mappingFor(u)
	if err != nil {
		f.t.Fatalf("generictest: %v", err)
	}
	resource := f.client.Resource(mapping.Resource)
	if u.GetNamespace() != "" {
		return u, mapping.Resource, resource.Namespace(u.GetNamespace())
	}
	return u, mapping.Resource, resource
}

// settle waits until every handler has met the expectations of what, or
// fails the test at the Fake's timeout with what each handler lacks and
// has.
func (f *Fake) settle(what string, expectations []expectation) {
	f.t.Helper()
	ctx, cancel, bound := f.deadline()
	defer cancel()
	f.settleWithin(ctx, bound, what, expectations)
}

// settleWithin is settle within the bound of ctx, for a wait that settles
// at its end.
func (f *Fake) settleWithin(ctx context.Context, bound time.Duration, what string, expectations []expectation) {
	f.t.Helper()
	for {
		changed := f.seen.wait()
		unmet := f.seen.unmet(expectations)
		if len(unmet) == 0 {
			return
		}
		select {
		case <-changed:
		case <-ctx.Done():
			f.t.Fatalf("generictest: handlers did not see %s within %v:\n%s", what, bound, join(unmet))
			return
		}
	}
}

// snapshot holds the objects of the resources of the Fake's handlers.
type snapshot map[schema.GroupVersionResource]map[string]*unstructured.Unstructured

func (f *Fake) snapshot() snapshot {
	f.t.Helper()
	s := snapshot{}
	for _, gvr := range f.seen.resources() {
		gvk, err := f.mapper.KindFor(gvr)
		if err != nil {
			f.t.Fatalf("generictest: %v", err)
		}
		list, err := f.client.Tracker().List(gvr, gvk, "")
		if err != nil {
			f.t.Fatalf("generictest: %v", err)
		}
		objs := map[string]*unstructured.Unstructured{}
		for _, item := range list.(*unstructured.UnstructuredList).Items {
			objs[keyOf(&item)] = item.DeepCopy()
		}
		s[gvr] = objs
	}
	return s
}

// relisted are the expectations of a relist that goes from before to after:
// every object of after shown again, every other one of before deleted.
func (f *Fake) relisted(before, after snapshot) []expectation {
	var expectations []expectation
	for gvr, objs := range after {
		for key, obj := range objs {
			expectations = append(expectations, f.seen.expectRelisted(gvr, obj, key))
		}
		for key, old := range before[gvr] {
			if _, ok := objs[key]; !ok {
				expectations = append(expectations, f.seen.expect(gvr, old, key, false, 0))
			}
		}
	}
	return expectations
}
