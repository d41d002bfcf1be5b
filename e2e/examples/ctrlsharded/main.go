// Command ctrlsharded is a controller-runtime manager whose cache is this
// library's (ctrlcache), sharded over the manager's replicas by a Lease
// membership: run any number of replicas (a Deployment), leader election
// off, and each reconciles only the ConfigMaps labelled
// ctrlsharded.generic-informers.io/primary that its replica owns, and logs
// each reconcile. When a replica joins, leaves or dies, the others take its
// share. Its test (e2e_test.go) runs two replicas on the embedded API
// server and kills one (docs/controller-runtime.md, "Sharding a manager").
package main

import (
	"flag"
	"os"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

func main() {
	var opts Options
	flag.StringVar(&opts.Membership.Identity, "identity", os.Getenv("POD_NAME"), "this replica's identity in its group, unique and stable for its life: its Pod's name (set POD_NAME from metadata.name)")
	flag.StringVar(&opts.Membership.Group, "group", "ctrlsharded", "the group of replicas that share the ConfigMaps: the same for every replica")
	flag.StringVar(&opts.LeaseNamespace, "lease-namespace", "default", "the namespace of the group's Leases")
	flag.StringVar(&opts.Namespace, "namespace", "", "the namespace of the ConfigMaps to reconcile (empty: every namespace)")
	flag.Parse()
	ctrl.SetLogger(zap.New())
	log := ctrl.Log.WithName("ctrlsharded")
	opts.OnReconcile = func(r Reconcile) {
		log.Info("Reconciled", "replica", r.Replica, "configmap", r.Key, "cached", r.Primary != nil)
	}
	mgr, err := NewManager(ctrl.GetConfigOrDie(), opts)
	if err == nil {
		err = mgr.Start(ctrl.SetupSignalHandler())
	}
	if err != nil {
		log.Error(err, "ctrlsharded")
		os.Exit(1)
	}
}
