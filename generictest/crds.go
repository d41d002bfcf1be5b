package generictest

import (
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// customResourceSet is what the fixtures say of custom resources: the
// resources their CustomResourceDefinitions define, and, for objects of a
// kind with no definition, a resource guessed from the kind.
type customResourceSet struct {
	scopes    map[schema.GroupVersionKind]meta.RESTScope
	resources map[schema.GroupVersionKind]schema.GroupVersionResource
	listKinds map[schema.GroupVersionResource]string
	// status holds the resources whose definition declares a status
	// subresource.
	status map[schema.GroupVersionResource]bool
}

func customResources(objs []*unstructured.Unstructured) *customResourceSet {
	set := &customResourceSet{
		scopes:    map[schema.GroupVersionKind]meta.RESTScope{},
		resources: map[schema.GroupVersionKind]schema.GroupVersionResource{},
		listKinds: map[schema.GroupVersionResource]string{},
		status:    map[schema.GroupVersionResource]bool{},
	}
	for _, obj := range objs {
		if obj.GroupVersionKind().GroupKind() == (schema.GroupKind{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}) {
			set.addDefinition(obj)
		}
	}
	for _, obj := range objs {
		gvk := obj.GroupVersionKind()
		if _, defined := set.resources[gvk]; defined || gvk.Group == "" || gvk.Group == "apiextensions.k8s.io" || isBuiltInGroup(gvk.Group) {
			continue
		}
		scope := meta.RESTScopeRoot
		if obj.GetNamespace() != metav1.NamespaceNone {
			scope = meta.RESTScopeNamespace
		}
		plural, _ := meta.UnsafeGuessKindToResource(gvk)
		set.add(gvk, plural, scope)
	}
	return set
}

// addDefinition records the resource a CustomResourceDefinition defines,
// in each of its versions, and whether it has a status subresource (in the
// version's subresources, or, as in apiextensions.k8s.io/v1beta1, in the
// spec's).
func (s *customResourceSet) addDefinition(crd *unstructured.Unstructured) {
	_, allStatus, _ := unstructured.NestedFieldNoCopy(crd.Object, "spec", "subresources", "status")
	group, _, _ := unstructured.NestedString(crd.Object, "spec", "group")
	kind, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "kind")
	plural, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "plural")
	scopeName, _, _ := unstructured.NestedString(crd.Object, "spec", "scope")
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	scope := meta.RESTScopeNamespace
	if scopeName == "Cluster" {
		scope = meta.RESTScopeRoot
	}
	for _, v := range versions {
		entry, ok := v.(map[string]any)
		if !ok {
			continue // not a CRD version; the CRD is of no use here
		}
		version, _ := entry["name"].(string)
		gvk := schema.GroupVersionKind{Group: group, Version: version, Kind: kind}
		gvr := gvk.GroupVersion().WithResource(plural)
		s.add(gvk, gvr, scope)
		_, status, _ := unstructured.NestedFieldNoCopy(entry, "subresources", "status")
		s.status[gvr] = allStatus || status
	}
}

func (s *customResourceSet) add(gvk schema.GroupVersionKind, gvr schema.GroupVersionResource, scope meta.RESTScope) {
	s.scopes[gvk] = scope
	s.resources[gvk] = gvr
	s.listKinds[gvr] = gvk.Kind + "List"
}

// mapper maps the custom resources.
func (s *customResourceSet) mapper() meta.RESTMapper {
	var versions []schema.GroupVersion
	for gvk := range s.resources {
		versions = append(versions, gvk.GroupVersion())
	}
	mapper := meta.NewDefaultRESTMapper(versions)
	for gvk, gvr := range s.resources {
		mapper.AddSpecific(gvk, gvr, gvr.GroupVersion().WithResource(gvr.Resource), s.scopes[gvk])
	}
	return mapper
}

// isBuiltInGroup reports whether group is one of Kubernetes' own API
// groups, whose kinds the scheme's RESTMapper maps.
func isBuiltInGroup(group string) bool {
	switch group {
	case "apps", "batch", "policy", "autoscaling", "k8s.io":
		return true
	}
	return strings.HasSuffix(group, ".k8s.io")
}
