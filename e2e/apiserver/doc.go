// Package apiserver runs a real kube-apiserver with an embedded etcd in the
// current process, built only from Go modules: go.etcd.io/etcd/server/v3/embed
// for etcd and k8s.io/kubernetes/cmd/kube-apiserver/app/testing
// (StartTestServer) for the API server, CRDs included (apiextensions is in
// the server chain).
//
// From a test:
//
//	server := apiserver.StartForTest(t)              // stopped by t.Cleanup
//	client := kubernetes.NewForConfigOrDie(server.Config)
//	err := server.InstallCRDs(ctx, "config/crd/widgets.yaml") // served on return
//
// From a program:
//
//	server, err := apiserver.Start(ctx, apiserver.Options{})
//	defer server.Stop()
//
// Extra kube-apiserver flags, such as feature gates or
// --authorization-mode=RBAC, go in Options.Flags. Stop shuts both servers
// down, closes their ports and removes their temporary directories.
package apiserver
