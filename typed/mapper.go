package typed

import (
	"fmt"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
)

// kindMapper finds the resource of a kind, and the scope of a resource.
type kindMapper interface {
	mappingFor(gvk schema.GroupVersionKind) (*meta.RESTMapping, error)
	scopeOf(gvr schema.GroupVersionResource) (meta.RESTScopeName, error)
}

// restMapperKinds is the kindMapper of a RESTMapper given in Clients.
type restMapperKinds struct{ mapper meta.RESTMapper }

func (m restMapperKinds) mappingFor(gvk schema.GroupVersionKind) (*meta.RESTMapping, error) {
	return m.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
}

func (m restMapperKinds) scopeOf(gvr schema.GroupVersionResource) (meta.RESTScopeName, error) {
	gvk, err := m.mapper.KindFor(gvr)
	if err != nil {
		return "", err
	}
	mapping, err := m.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return "", err
	}
	if mapping.Scope == nil {
		return "", fmt.Errorf("the RESTMapper gave %v no scope", gvr)
	}
	return mapping.Scope.Name(), nil
}

// discoveryKinds is the default kindMapper: it asks discovery about the
// kind's own GroupVersion only (ServerResourcesForGroupVersion) and keeps
// the mappings it found, where a discovery RESTMapper fetches and keeps
// every group of the server (about 100 KiB of a cluster's heap for a few
// kinds).
type discoveryKinds struct {
	client discovery.DiscoveryInterface

	mu       sync.Mutex
	mappings map[schema.GroupVersionKind]*meta.RESTMapping
}

func newDiscoveryKinds(client discovery.DiscoveryInterface) *discoveryKinds {
	return &discoveryKinds{client: client, mappings: map[schema.GroupVersionKind]*meta.RESTMapping{}}
}

// mappingFor returns the resource serving gvk. A kind not found is asked
// about again next time (its CRD may be created meanwhile).
func (d *discoveryKinds) mappingFor(gvk schema.GroupVersionKind) (*meta.RESTMapping, error) {
	d.mu.Lock()
	mapping, ok := d.mappings[gvk]
	d.mu.Unlock()
	if ok {
		return mapping, nil
	}
	resources, err := d.client.ServerResourcesForGroupVersion(gvk.GroupVersion().String())
	if err != nil {
		return nil, fmt.Errorf("discovery of %s: %w", gvk.GroupVersion(), err)
	}
	for _, r := range resources.APIResources {
		if r.Kind != gvk.Kind || strings.Contains(r.Name, "/") {
			continue
		}
		scope := meta.RESTScopeRoot
		if r.Namespaced {
			scope = meta.RESTScopeNamespace
		}
		mapping = &meta.RESTMapping{Resource: gvk.GroupVersion().WithResource(r.Name), GroupVersionKind: gvk, Scope: scope}
		d.mu.Lock()
		d.mappings[gvk] = mapping
		d.mu.Unlock()
		return mapping, nil
	}
	return nil, &meta.NoKindMatchError{GroupKind: gvk.GroupKind(), SearchedVersions: []string{gvk.Version}}
}

// scopeOf asks discovery whether gvr is namespaced.
func (d *discoveryKinds) scopeOf(gvr schema.GroupVersionResource) (meta.RESTScopeName, error) {
	resources, err := d.client.ServerResourcesForGroupVersion(gvr.GroupVersion().String())
	if err != nil {
		return "", fmt.Errorf("discovery of %s: %w", gvr.GroupVersion(), err)
	}
	for _, r := range resources.APIResources {
		if r.Name != gvr.Resource {
			continue
		}
		if r.Namespaced {
			return meta.RESTScopeNameNamespace, nil
		}
		return meta.RESTScopeNameRoot, nil
	}
	return "", fmt.Errorf("discovery of %s: no resource %q", gvr.GroupVersion(), gvr.Resource)
}
