// Package ctrlcache holds the tests of the controller-runtime cache backend
// (module github.com/generic-informers/generic/ctrlcache) against the
// embedded kube-apiserver: controller-runtime's cache.Cache contract, read
// through a manager's client, sharding and kinds installed later.
package ctrlcache
