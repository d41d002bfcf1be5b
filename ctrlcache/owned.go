package ctrlcache

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/generic-informers/generic"
)

// Owned keeps a controller-runtime controller of one kind of primary
// objects to the primaries its replica owns under a Lease membership
// (generic.WithMembership in Options.Factory), as package controller keeps
// its own controllers (generic.Ownership, docs/sharding.md): so that each
// replica reconciles only its shard, and two live replicas never reconcile
// one primary at once, while the membership changes too. A replica's cache
// holds more than it owns while its membership moves (the union of its old
// and new shard, and a joining replica's shard before it owns it), and
// controller-runtime's controllers reconcile whatever their cache tells
// them of; Owned is what tells them apart, in three parts:
//
//   - Predicate, given to For (not to WithEventFilter, which applies it to
//     every watch), passes an event only if the replica owns its object,
//     and keeps the last state of each owned primary deleted until a
//     reconcile of it has succeeded.
//   - Reconciler wraps the reconciler: when a key's reconcile is due, it
//     drops the key unless the replica owns its primary, judged by the
//     primary's cached state, or if the cache no longer holds it, by the
//     last state of a delete Predicate passed (an object that leaves the
//     replica's shard reaches the handlers as a delete once the replica no
//     longer owns it). A key whose primary is neither (another replica's
//     primary, mapped from a secondary object by Owns or Watches) is
//     dropped. It cancels the context of a reconcile whose primary the
//     replica stops owning: write the reconciler to return when its
//     context ends.
//   - Source, given to WatchesRawSource, enqueues the cached primaries the
//     replica comes to own: all it owns when the controller starts, and
//     those it takes from a replica that left or died.
//
// Give them to the controller of the primary kind:
//
//	owned, err := ctrlcache.NewOwned(mgr.GetCache(), &corev1.ConfigMap{})
//	err = builder.ControllerManagedBy(mgr).
//		For(&corev1.ConfigMap{}, builder.WithPredicates(owned.Predicate())).
//		WatchesRawSource(owned.Source()).
//		Complete(owned.Reconciler(reconciler))
//
// Without a membership the replica owns every object: Predicate passes
// every event, Reconciler returns the reconciler given, and Source
// enqueues nothing. An Owned serves one controller; its methods may be
// called from any goroutine.
type Owned struct {
	cache     crcache.Cache
	primary   client.Object
	list      client.ObjectList
	ownership func() generic.Ownership
	// member reports whether the cache's Registry has a membership, which
	// does not change.
	member bool

	mu sync.Mutex
	// deleted holds the last state of each owned primary whose delete
	// Predicate passed, until a reconcile of its key used it and
	// succeeded, or dropped it.
	deleted map[types.NamespacedName]client.Object
}

// NewOwned returns the Owned of the controller whose primary objects are
// of primary's kind and view (the object given to the builder's For: a
// typed object, an *unstructured.Unstructured or a
// *metav1.PartialObjectMetadata with its GroupVersionKind set), in c, a
// cache made by New or BuilderWithOptions (a manager's GetCache). It
// takes the cache's informer of primary (GetInformer, without waiting for
// it to sync), as For will. A cache of another make, or a primary the
// cache cannot have an informer of, is an error. Do not RemoveInformer the
// primary's informer while the controller runs.
func NewOwned(c crcache.Cache, primary client.Object) (*Owned, error) {
	rc, ok := c.(*registryCache)
	if !ok {
		return nil, fmt.Errorf("ctrlcache: NewOwned: the cache is a %T, not one made by ctrlcache.New or BuilderWithOptions", c)
	}
	if v := reflect.ValueOf(primary); primary == nil || v.Kind() == reflect.Pointer && v.IsNil() {
		return nil, errors.New("ctrlcache: NewOwned: nil primary object")
	}
	informer, err := c.GetInformer(context.Background(), primary, crcache.BlockUntilSynced(false))
	if err != nil {
		return nil, fmt.Errorf("ctrlcache: NewOwned: %w", err)
	}
	owner, ok := informer.(interface{ Ownership() generic.Ownership })
	if !ok {
		return nil, fmt.Errorf("ctrlcache: NewOwned: the informer of %T is a %T, which has no Ownership", primary, informer)
	}
	list, err := rc.listOf(primary)
	if err != nil {
		return nil, fmt.Errorf("ctrlcache: NewOwned: %w", err)
	}
	return &Owned{
		cache:     c,
		primary:   primary,
		list:      list,
		ownership: owner.Ownership,
		member:    owner.Ownership().Changed != nil,
		deleted:   map[types.NamespacedName]client.Object{},
	}, nil
}

// Predicate passes an event only if the replica owns its object (the new
// state of an update); it keeps the last state of each owned primary
// deleted, for Reconciler. Give it to the builder's For only.
func (o *Owned) Predicate() predicate.Predicate {
	if !o.member {
		return predicate.Funcs{}
	}
	return predicate.Funcs{
		CreateFunc:  func(e event.CreateEvent) bool { return o.owns(e.Object) },
		UpdateFunc:  func(e event.UpdateEvent) bool { return o.owns(e.ObjectNew) },
		DeleteFunc:  func(e event.DeleteEvent) bool { return o.deletedOwned(e.Object) },
		GenericFunc: func(e event.GenericEvent) bool { return o.owns(e.Object) },
	}
}

func (o *Owned) owns(obj client.Object) bool { return o.ownership().Owns(obj) }

// deletedOwned reports whether the replica owns obj, deleted, and if so
// keeps its last state.
func (o *Owned) deletedOwned(obj client.Object) bool {
	if !o.owns(obj) {
		return false
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.deleted[client.ObjectKeyFromObject(obj)] = obj
	return true
}

// Reconciler returns r, reconciling only the keys whose primary the
// replica owns when their reconcile is due, each under a context cancelled
// once the replica stops owning its primary. A key it drops is done
// (reconcile.Result{}, nil). Reading the primary from the cache fails only
// as the cache's Get does (the context ended); that error is returned,
// and the key retried.
func (o *Owned) Reconciler(r reconcile.Reconciler) reconcile.Reconciler {
	if !o.member {
		return r
	}
	return reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		primary, fromDelete, err := o.primaryOf(ctx, req.NamespacedName)
		if err != nil {
			return reconcile.Result{}, err
		}
		ownership := o.ownership()
		if primary == nil || !ownership.Owns(primary) {
			o.forgetDelete(req.NamespacedName, primary)
			return reconcile.Result{}, nil
		}
		ctx, done := o.whileOwned(ctx, primary, ownership)
		result, err := r.Reconcile(ctx, req)
		done()
		if fromDelete && err == nil && result.IsZero() {
			o.forgetDelete(req.NamespacedName, primary)
		}
		return result, err
	})
}

// primaryOf returns the state of key's primary that its ownership is
// judged by: the cached state, else the last state of a delete Predicate
// passed (fromDelete), else nil. A kept delete of an earlier object of the
// same name (another UID) than the one cached is dropped.
func (o *Owned) primaryOf(ctx context.Context, key types.NamespacedName) (primary client.Object, fromDelete bool, err error) {
	cached, ok := o.primary.DeepCopyObject().(client.Object)
	if !ok {
		return nil, false, fmt.Errorf("ctrlcache: a copy of %T is not a client.Object", o.primary)
	}
	err = o.cache.Get(ctx, key, cached, client.UnsafeDisableDeepCopy)
	o.mu.Lock()
	defer o.mu.Unlock()
	deleted := o.deleted[key]
	switch {
	case err == nil:
		if deleted != nil && deleted.GetUID() != cached.GetUID() {
			delete(o.deleted, key)
		}
		return cached, false, nil
	case apierrors.IsNotFound(err):
		return deleted, deleted != nil, nil
	default:
		return nil, false, err
	}
}

// forgetDelete drops the kept delete of key if it is primary (nil: any).
func (o *Owned) forgetDelete(key types.NamespacedName, primary client.Object) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if deleted, ok := o.deleted[key]; ok && (primary == nil || deleted == primary) {
		delete(o.deleted, key)
	}
}

// whileOwned returns ctx, cancelled once the replica no longer owns
// primary (owned is what it owns now), and a func to call when the
// reconcile has returned, which ends the watch.
func (o *Owned) whileOwned(ctx context.Context, primary client.Object, owned generic.Ownership) (context.Context, func()) {
	ctx, cancel := context.WithCancel(ctx)
	returned := make(chan struct{})
	var watch sync.WaitGroup
	watch.Go(func() {
		for {
			select {
			case <-owned.Changed:
				if owned = o.ownership(); !owned.Owns(primary) {
					cancel()
					return
				}
			case <-returned:
				return
			case <-ctx.Done():
				return
			}
		}
	})
	return ctx, func() {
		close(returned)
		watch.Wait()
		cancel()
	}
}

// Source enqueues the keys of the cached primaries the replica comes to
// own, from the controller's start (all it owns then) until its context
// ends. Give it to the builder's WatchesRawSource.
func (o *Owned) Source() source.Source {
	return source.Func(func(ctx context.Context, queue workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
		if o.member {
			go o.follow(ctx, queue)
		}
		return nil
	})
}

// follow enqueues the cached primaries owned now and not before, at once
// and each time what the replica owns changes, until ctx ends.
func (o *Owned) follow(ctx context.Context, queue workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	var before *generic.Ownership // nil: nothing enqueued yet
	for {
		now := o.ownership()
		for {
			err := o.enqueueOwned(ctx, queue, before, now)
			if err == nil {
				break
			}
			klog.FromContext(ctx).Error(err, "Cannot list the cached primaries the replica came to own; retrying in 1s")
			select {
			case <-time.After(time.Second):
			case <-ctx.Done():
				return
			}
		}
		before = &now
		select {
		case <-now.Changed:
		case <-ctx.Done():
			return
		}
	}
}

// enqueueOwned enqueues the cached primaries now owns and before did not
// (before nil: every one now owns).
func (o *Owned) enqueueOwned(ctx context.Context, queue workqueue.TypedRateLimitingInterface[reconcile.Request], before *generic.Ownership, now generic.Ownership) error {
	list, ok := o.list.DeepCopyObject().(client.ObjectList)
	if !ok {
		return fmt.Errorf("ctrlcache: a copy of %T is not a client.ObjectList", o.list)
	}
	if err := o.cache.List(ctx, list, client.UnsafeDisableDeepCopy); err != nil {
		return err
	}
	return meta.EachListItem(list, func(item runtime.Object) error {
		obj, ok := item.(client.Object)
		if ok && now.Owns(obj) && (before == nil || !before.Owns(obj)) {
			queue.Add(reconcile.Request{NamespacedName: client.ObjectKeyFromObject(obj)})
		}
		return nil
	})
}
