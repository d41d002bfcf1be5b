package main

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/ctrlcache"
)

// PrimaryLabel marks the ConfigMaps the controller reconciles: its
// primaries, whatever the label's value.
const PrimaryLabel = "ctrlsharded.generic-informers.io/primary"

// Options are one replica's.
type Options struct {
	// Membership is the replica's place in its group: Group, Identity and
	// the timings (zero: the defaults, 15 s, 10 s and 2 s). Its Leases
	// client is made by NewManager, in LeaseNamespace.
	Membership     generic.Membership
	LeaseNamespace string
	// Namespace is where the primaries are; empty: every namespace.
	Namespace string
	// OnReconcile, if not nil, is told of each reconcile, from the
	// controller's workers, after the reconcile's read.
	OnReconcile func(Reconcile)
}

// Reconcile is one reconcile of a primary ConfigMap.
type Reconcile struct {
	// Replica is the Identity of the replica that reconciled it.
	Replica string
	Key     types.NamespacedName
	// Primary is the ConfigMap as the replica's cache held it, a copy;
	// nil if the cache no longer held it (it was deleted).
	Primary *corev1.ConfigMap
}

// NewManager returns the manager of one replica: its cache is ctrlcache's,
// holding the primaries of the shard the membership gives the replica, and
// its controller reconciles only those the replica owns (ctrlcache.Owned).
// Leader election is off and the metrics server disabled: every replica
// runs the controller, on its own shard. Start the manager to join the
// group; when Start's context ends, the replica leaves it cleanly (its
// share moves to the others within a few RetryPeriods), which the
// manager's GracefulShutdownTimeout (30 s) must leave time for
// (Membership.LeaveTimeout, by default LeaseDuration).
func NewManager(cfg *rest.Config, opts Options) (manager.Manager, error) {
	leases, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	membership := opts.Membership
	membership.Leases = leases.CoordinationV1().Leases(opts.LeaseNamespace)
	member, err := generic.NewMember(membership)
	if err != nil {
		return nil, err
	}
	primaries, err := labels.NewRequirement(PrimaryLabel, selection.Exists, nil)
	if err != nil {
		return nil, err
	}
	cacheOptions := cache.Options{ByObject: map[client.Object]cache.ByObject{
		&corev1.ConfigMap{}: {Label: labels.NewSelector().Add(*primaries)},
	}}
	if opts.Namespace != "" {
		cacheOptions.DefaultNamespaces = map[string]cache.Config{opts.Namespace: {}}
	}
	mgr, err := manager.New(cfg, manager.Options{
		NewCache: ctrlcache.BuilderWithOptions(ctrlcache.Options{
			Factory: []generic.FactoryOption{generic.WithMembership(member)},
		}),
		Cache:          cacheOptions,
		LeaderElection: false,
		Metrics:        metricsserver.Options{BindAddress: "0"},
		// A Deployment's Pod runs one replica; the e2e test runs several
		// in its process, each with a controller of the same name.
		Controller: config.Controller{SkipNameValidation: new(true)},
	})
	if err != nil {
		return nil, err
	}
	return mgr, addController(mgr, membership.Identity, opts.OnReconcile)
}

// addController adds the controller of the primaries to mgr, kept to what
// the replica owns.
func addController(mgr manager.Manager, replica string, onReconcile func(Reconcile)) error {
	owned, err := ctrlcache.NewOwned(mgr.GetCache(), &corev1.ConfigMap{})
	if err != nil {
		return err
	}
	r := &reconciler{client: mgr.GetClient(), replica: replica, onReconcile: onReconcile}
	return builder.ControllerManagedBy(mgr).
		Named("ctrlsharded").
		For(&corev1.ConfigMap{}, builder.WithPredicates(owned.Predicate())).
		WatchesRawSource(owned.Source()).
		Complete(owned.Reconciler(r))
}

// reconciler reads the primary from the cache and says so: the work of a
// real controller goes where OnReconcile is called, under ctx, which ends
// if the replica stops owning the primary.
type reconciler struct {
	client      client.Client
	replica     string
	onReconcile func(Reconcile)
}

func (r *reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	var primary *corev1.ConfigMap
	cm := &corev1.ConfigMap{}
	err := r.client.Get(ctx, req.NamespacedName, cm)
	switch {
	case err == nil:
		primary = cm
	case !apierrors.IsNotFound(err):
		return reconcile.Result{}, err
	}
	if r.onReconcile != nil {
		r.onReconcile(Reconcile{Replica: r.replica, Key: req.NamespacedName, Primary: primary})
	}
	return reconcile.Result{}, nil
}
