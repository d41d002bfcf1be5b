package generictest

import (
	"encoding/json"
	"errors"
	"fmt"
	"k8s.io/apimachinery/pkg/api/meta"
	"net/http"
	"reflect"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	clienttesting "k8s.io/client-go/testing"
)

// optimisticLockErrorMsg is what kube-apiserver says of an update whose
// resourceVersion is not the stored one.
const optimisticLockErrorMsg = "the object has been modified; please apply your changes to the latest version and try again"

// stampingTracker is the store every write of the Fake's clients goes
// through (the dynamic client's reactors, and so the typed clientset's and
// the REST front's requests): client-go's tracker, made as strict as
// kube-apiserver about what a write may do.
//
//   - Every object it stores is stamped with a new resourceVersion; the
//     tracker itself keeps versions out of the objects.
//   - An update or a patch that changes nothing (unchanged: the object it
//     would store is the stored one, as kube-apiserver would store them,
//     but for resourceVersion) stores nothing and returns the stored
//     object: no new resourceVersion, no watch event, no entry in writes.
//   - An update (or a patch whose result carries another resourceVersion)
//     whose resourceVersion is set and is not the stored one fails with 409
//     Conflict; an empty one is an unconditional update.
//   - metadata.generation is 1 on create and grows by one at each update
//     that changes anything outside metadata (and, for a resource with a
//     status subresource, outside status).
//   - For a resource with a status subresource (statusSubresource), an
//     update of the main resource keeps the stored status, and one of the
//     status subresource changes the status only; a resource with none
//     has no status subresource to update (404).
//   - A delete honours its preconditions (uid, resourceVersion): 409
//     Conflict when they do not hold.
//   - uid and creationTimestamp are kept across updates.
//
// Each write is recorded in writes, for Settle. Writes are serialized by
// mu, so that the check of a resourceVersion and the write it guards are
// one step.
type stampingTracker struct {
	clienttesting.ObjectTracker
	next func() string
	// statusSubresource reports whether gvr has a status subresource.
	statusSubresource func(schema.GroupVersionResource) bool
	// goType returns an object of the Go type of a built-in kind.
	goType func(schema.GroupVersionKind) (runtime.Object, bool)
	writes *writeLog
	// deletes holds the resource version of each delete, for its watch
	// events (deleteStamps).
	deletes *deleteStamps

	mu sync.Mutex
}

// Create stores a stamped copy of obj at generation 1; the caller's object
// is not modified.
func (t *stampingTracker) Create(gvr schema.GroupVersionResource, obj runtime.Object, ns string, opts ...metav1.CreateOptions) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	u, err := asUnstructured(obj)
	if err != nil {
		return err
	}
	if u.GetNamespace() == "" {
		u.SetNamespace(ns)
	}
	u.SetGeneration(1)
	u.SetResourceVersion(t.next())
	rejected := t.writes.rejectedBefore(gvr, u)
	if err := t.ObjectTracker.Create(gvr, u, ns, opts...); err != nil {
		return err
	}
	t.writes.record(gvr, u, true, rejected)
	return nil
}

// Update stores obj as an update of the main resource (see update); the
// caller's object is not modified.
func (t *stampingTracker) Update(gvr schema.GroupVersionResource, obj runtime.Object, ns string, _ ...metav1.UpdateOptions) error {
	_, err := t.update(gvr, obj, ns, "")
	return err
}

// Patch stores patched, the patch reaction's own copy of the patched
// object, as an update of the main resource, and makes patched what was
// stored: the reaction returns it to the client.
func (t *stampingTracker) Patch(gvr schema.GroupVersionResource, patched runtime.Object, ns string, _ ...metav1.PatchOptions) error {
	stored, err := t.update(gvr, patched, ns, "")
	if err != nil {
		return err
	}
	if u, ok := patched.(*unstructured.Unstructured); ok {
		u.Object = stored.Object
	}
	return nil
}

// Apply is not served by the tracker: the Fake's patch reactor serves
// applies (strict.go, reactors.go), and an apply that reached the tracker
// would escape the stamping and the checks.
func (t *stampingTracker) Apply(gvr schema.GroupVersionResource, _ runtime.Object, _ string, _ ...metav1.PatchOptions) error {
	return apierrors.NewMethodNotSupported(gvr.GroupResource(), "apply to the tracker")
}

// Delete deletes the object if the preconditions of opts hold, and records
// its last state.
func (t *stampingTracker) Delete(gvr schema.GroupVersionResource, ns, name string, opts ...metav1.DeleteOptions) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	stored, err := t.ObjectTracker.Get(gvr, ns, name)
	if err != nil {
		return err
	}
	last, err := asUnstructured(stored)
	if err != nil {
		return err
	}
	if len(opts) > 0 && opts[0].Preconditions != nil {
		if err := checkPreconditions(gvr, last, opts[0].Preconditions); err != nil {
			return err
		}
	}
	rejected := t.writes.rejectedBefore(gvr, last)
	// The delete's event carries a resource version of its own, as
	// kube-apiserver's do (the revision of the delete), not the object's
	// last: a cache's resource version never goes back.
	t.deletes.set(gvr, last, t.next())
	if err := t.ObjectTracker.Delete(gvr, ns, name, opts...); err != nil {
		return err
	}
	t.writes.record(gvr, last, false, rejected)
	return nil
}

// checkPreconditions fails, as kube-apiserver does, if a delete's
// preconditions do not hold for the stored object.
func checkPreconditions(gvr schema.GroupVersionResource, stored *unstructured.Unstructured, p *metav1.Preconditions) error {
	if p.UID != nil && *p.UID != stored.GetUID() {
		return apierrors.NewConflict(gvr.GroupResource(), stored.GetName(),
			fmt.Errorf("Precondition failed: UID in precondition: %v, UID in object meta: %v", *p.UID, stored.GetUID()))
	}
	if p.ResourceVersion != nil && *p.ResourceVersion != stored.GetResourceVersion() {
		return apierrors.NewConflict(gvr.GroupResource(), stored.GetName(),
			fmt.Errorf("Precondition failed: ResourceVersion in precondition: %v, ResourceVersion in object meta: %v", *p.ResourceVersion, stored.GetResourceVersion()))
	}
	return nil
}

// update stores obj as an update of subresource ("" for the main resource,
// or "status") and returns what it stored.
func (t *stampingTracker) update(gvr schema.GroupVersionResource, obj runtime.Object, ns, subresource string) (*unstructured.Unstructured, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	in, err := asUnstructured(obj)
	if err != nil {
		return nil, err
	}
	return t.updateLocked(gvr, in, ns, subresource)
}

// patch stores, as an update of subresource, what patch makes of the
// stored object, and returns it; the read and the write are one step.
func (t *stampingTracker) patch(gvr schema.GroupVersionResource, ns, name, subresource string, patch func(stored *unstructured.Unstructured) (*unstructured.Unstructured, error)) (*unstructured.Unstructured, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	stored, err := t.ObjectTracker.Get(gvr, ns, name)
	if err != nil {
		return nil, err
	}
	current, err := asUnstructured(stored)
	if err != nil {
		return nil, err
	}
	patched, err := patch(current)
	if err != nil {
		return nil, err
	}
	if patched.GetName() != name {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the patch changes the name of %s %q to %q", gvr.GroupResource(), name, patched.GetName()))
	}
	return t.updateLocked(gvr, patched, ns, subresource)
}

// updateLocked is update, with t.mu held; in is the caller's copy.
func (t *stampingTracker) updateLocked(gvr schema.GroupVersionResource, in *unstructured.Unstructured, ns, subresource string) (*unstructured.Unstructured, error) {
	if in.GetNamespace() == "" {
		in.SetNamespace(ns)
	}
	stored, err := t.ObjectTracker.Get(gvr, ns, in.GetName())
	if err != nil {
		return nil, err
	}
	current, err := asUnstructured(stored)
	if err != nil {
		return nil, err
	}
	if rv := in.GetResourceVersion(); rv != "" && rv != current.GetResourceVersion() {
		return nil, apierrors.NewConflict(gvr.GroupResource(), in.GetName(), errors.New(optimisticLockErrorMsg))
	}
	withStatus := t.statusSubresource(gvr)
	var next *unstructured.Unstructured
	switch {
	case subresource == "status" && !withStatus:
		return nil, noStatusSubresource(gvr, in.GetName())
	case subresource == "status":
		// Only the status changes; everything else is as stored.
		next = current.DeepCopy()
		copyField(next, in, "status")
	default:
		next = in
		if withStatus {
			copyField(next, current, "status")
		}
		keepSystemFields(next, current)
	}
	generation := current.GetGeneration()
	if subresource != "status" && !equality.Semantic.DeepEqual(t.spec(current), t.spec(next)) {
		generation++
	}
	next.SetGeneration(generation)
	if t.unchanged(current, next) {
		// A write that changes nothing is no write, as in kube-apiserver:
		// the stored object keeps its resourceVersion, no watch event is
		// sent, and nothing is recorded for Settle.
		return current, nil
	}
	next.SetResourceVersion(t.next())
	rejected := t.writes.rejectedBefore(gvr, next)
	if err := t.ObjectTracker.Update(gvr, next, ns); err != nil {
		return nil, err
	}
	t.writes.record(gvr, next, true, rejected)
	return next.DeepCopy(), nil
}

// unchanged reports whether next, the object an update or a patch would
// store, is current as kube-apiserver would store it, but for
// metadata.resourceVersion: the server then writes nothing (its storage
// compares the encoded objects) and returns the stored object.
func (t *stampingTracker) unchanged(current, next *unstructured.Unstructured) bool {
	return equality.Semantic.DeepEqual(t.stored(current), t.stored(next))
}

// stored returns u as kube-apiserver would store it (asServerStores),
// without its resourceVersion.
func (t *stampingTracker) stored(u *unstructured.Unstructured) map[string]any {
	u = u.DeepCopy()
	u.SetResourceVersion("")
	return t.asServerStores(u)
}

// noStatusSubresource is kube-apiserver's answer to an update of the status
// of a resource that has no status subresource.
func noStatusSubresource(gvr schema.GroupVersionResource, name string) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure,
		Code:   http.StatusNotFound,
		Reason: metav1.StatusReasonNotFound,
		Details: &metav1.StatusDetails{
			Group: gvr.Group, Kind: gvr.Resource + "/status", Name: name,
		},
		Message: fmt.Sprintf("%s has no status subresource (a custom resource has one if its CRD fixture declares subresources.status; a built-in kind if its Go type has a status)",
			gvr.GroupResource()),
	}}
}

// copyField sets field of dst to that of src, or removes it if src has
// none.
func copyField(dst, src *unstructured.Unstructured, field string) {
	if value, ok := src.Object[field]; ok {
		dst.Object[field] = runtime.DeepCopyJSONValue(value)
	} else {
		delete(dst.Object, field)
	}
}

// keepSystemFields keeps in next the fields of metadata an update cannot
// change: uid (unless next sets one, which the API server would refuse if
// it differed) and creationTimestamp.
func keepSystemFields(next, current *unstructured.Unstructured) {
	if next.GetUID() == "" {
		next.SetUID(current.GetUID())
	}
	next.SetCreationTimestamp(current.GetCreationTimestamp())
}

// spec returns the top-level fields of u but metadata, a change of which
// bumps the generation, as kube-apiserver would store them: through the Go
// type of a built-in kind (so that a field a client's Go type adds empty,
// such as a container's resources, is no change), through JSON otherwise
// (so that whole numbers are int64).
func (t *stampingTracker) spec(u *unstructured.Unstructured) map[string]any {
	content := t.asServerStores(u)
	spec := make(map[string]any, len(content))
	for k, v := range content {
		if k != "metadata" {
			spec[k] = v
		}
	}
	return spec
}

// asServerStores returns the content of u as kube-apiserver would store
// it: through the Go type of a built-in kind; through JSON otherwise, with
// its metadata through metav1.ObjectMeta (so that a creationTimestamp a Go
// type writes as null is none). What does not convert is kept as it is.
func (t *stampingTracker) asServerStores(u *unstructured.Unstructured) map[string]any {
	if goType, builtIn := t.goType(u.GroupVersionKind()); builtIn {
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, goType); err == nil {
			if typed, err := runtime.DefaultUnstructuredConverter.ToUnstructured(goType); err == nil {
				return typed
			}
		}
		return u.Object
	}
	content, err := jsonNumbers(u.Object)
	if err != nil {
		return u.Object
	}
	// A custom resource's metadata is an ObjectMeta all the same.
	if m, ok := content["metadata"].(map[string]any); ok {
		var objectMeta metav1.ObjectMeta
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, &objectMeta); err == nil {
			if typed, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&objectMeta); err == nil {
				content["metadata"] = typed
			}
		}
	}
	return content
}

// jsonNumbers returns content as read from JSON by the dynamic client:
// whole numbers are int64.
func jsonNumbers(content map[string]any) (map[string]any, error) {
	data, err := json.Marshal(content)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	return out, utiljson.Unmarshal(data, &out)
}

// asUnstructured returns a copy of obj as unstructured.
func asUnstructured(obj runtime.Object) (*unstructured.Unstructured, error) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		return u.DeepCopy(), nil
	}
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{Object: content}
	u.SetGroupVersionKind(obj.GetObjectKind().GroupVersionKind())
	return u, nil
}

// statusSubresources returns the resources, of those listKinds names, that
// have a status subresource: the custom resources whose CRD fixture
// declares one, and the built-in kinds whose Go type has a status field.
func (f *Fake) statusSubresources(crds *customResourceSet) map[schema.GroupVersionResource]bool {
	status := map[schema.GroupVersionResource]bool{}
	for gvr := range f.listKinds {
		if _, custom := crds.listKinds[gvr]; custom {
			status[gvr] = crds.status[gvr]
			continue
		}
		gvk, err := f.mapper.KindFor(gvr)
		if err != nil {
			continue
		}
		if obj, builtIn := f.goTypeOf(gvk); builtIn {
			status[gvr] = hasStatusField(obj)
		}
	}
	return status
}

// hasStatusField reports whether obj's Go type has a field serialized as
// "status".
func hasStatusField(obj runtime.Object) bool {
	t := reflect.TypeOf(obj)
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return false
	}
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name == "status" {
			return true
		}
	}
	return false
}

// deleteStamps holds the resource version the Fake gave each delete, by
// resource, namespace, name and UID. The tracker sends a delete's watch
// event with the object as stored; the Fake's watches restamp it
// (proxyWatch.filter). Safe for concurrent use.
type deleteStamps struct {
	mu     sync.Mutex
	stamps map[deleteKey]string
}

type deleteKey struct {
	gvr                  schema.GroupVersionResource
	namespace, name, uid string
}

func keyOfDeleted(gvr schema.GroupVersionResource, obj metav1.Object) deleteKey {
	return deleteKey{gvr: gvr, namespace: obj.GetNamespace(), name: obj.GetName(), uid: string(obj.GetUID())}
}

func (d *deleteStamps) set(gvr schema.GroupVersionResource, obj metav1.Object, rv string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.stamps == nil {
		d.stamps = map[deleteKey]string{}
	}
	d.stamps[keyOfDeleted(gvr, obj)] = rv
}

// restamped returns a copy of the deleted object obj with its delete's
// resource version, or obj if none is known.
func (d *deleteStamps) restamped(gvr schema.GroupVersionResource, obj runtime.Object) runtime.Object {
	accessor, err := meta.Accessor(obj)
	if err != nil {
		return obj
	}
	d.mu.Lock()
	rv, ok := d.stamps[keyOfDeleted(gvr, accessor)]
	d.mu.Unlock()
	if !ok {
		return obj
	}
	out := obj.DeepCopyObject()
	if copied, err := meta.Accessor(out); err == nil {
		copied.SetResourceVersion(rv)
	}
	return out
}
