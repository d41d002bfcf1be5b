package main

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// unstructuredQuota is a Quota's content, to create it without the typed
// client the controller uses.
type unstructuredQuota map[string]any

func (q unstructuredQuota) object() *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: q}
}

func fromUnstructured(content map[string]any, into any) error {
	return runtime.DefaultUnstructuredConverter.FromUnstructured(content, into)
}
