// Package integration tests the library against a real kube-apiserver with
// an embedded etcd (package apiserver): real list and watch, resource
// versions, CRDs, protobuf, selectors and 410 Gone.
package integration
