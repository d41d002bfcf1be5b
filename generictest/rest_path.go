package generictest

import (
	"fmt"
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// restTarget is what a request path names: a resource, in a namespace or
// not, and an object of it and its subresource, or the collection.
type restTarget struct {
	gvr         schema.GroupVersionResource
	namespaced  bool   // the resource is namespaced
	namespace   string // "" for all namespaces, or a cluster-scoped resource
	name        string // "" for the collection
	subresource string // "" or "status"
}

// client returns the fake client's resource of t.
func (t restTarget) client(c dynamic.Interface) dynamic.ResourceInterface {
	resource := c.Resource(t.gvr)
	if t.namespaced && t.namespace != "" {
		return resource.Namespace(t.namespace)
	}
	return resource
}

// resolve reads a request path as kube-apiserver's REST API lays it out:
//
//	/api/VERSION/RESOURCE[/NAME[/SUBRESOURCE]]
//	/api/VERSION/namespaces/NAMESPACE/RESOURCE[/NAME[/SUBRESOURCE]]
//	/apis/GROUP/VERSION/... likewise
//
// RESOURCE must be one the Fake knows (its scheme's kinds and its
// fixtures' custom resources), under the path of its scope, and
// SUBRESOURCE "status", of a resource that has a status subresource.
// Anything else is 404, as the paths of discovery.
func (h *restFront) resolve(path string) (restTarget, error) {
	segments := strings.Split(strings.Trim(path, "/"), "/")
	var gv schema.GroupVersion
	var rest []string
	switch {
	case len(segments) >= 2 && segments[0] == "api":
		gv, rest = schema.GroupVersion{Version: segments[1]}, segments[2:]
	case len(segments) >= 3 && segments[0] == "apis":
		gv, rest = schema.GroupVersion{Group: segments[1], Version: segments[2]}, segments[3:]
	default:
		return restTarget{}, notServed(path, "the Fake's REST front serves only the resources under /api and /apis, not discovery")
	}
	if len(rest) == 0 {
		return restTarget{}, notServed(path, "the Fake's REST front serves no discovery")
	}
	var t restTarget
	inNamespace := len(rest) >= 3 && rest[0] == "namespaces" && h.knows(gv.WithResource(rest[2]))
	if inNamespace {
		t.namespace, rest = rest[1], rest[2:]
	}
	if len(rest) > 3 {
		return restTarget{}, notServed(path, "too many segments")
	}
	t.gvr = gv.WithResource(rest[0])
	if len(rest) > 1 {
		t.name = rest[1]
	}
	if len(rest) > 2 {
		t.subresource = rest[2]
	}
	if !h.knows(t.gvr) {
		return restTarget{}, notServed(path, fmt.Sprintf("%v is not a resource of the Fake's scheme or of its fixtures' CRDs", t.gvr))
	}
	namespaced, err := h.namespaced(t.gvr)
	if err != nil {
		return restTarget{}, err
	}
	t.namespaced = namespaced
	switch {
	case inNamespace && !namespaced:
		return restTarget{}, notServed(path, fmt.Sprintf("%v is cluster-scoped", t.gvr.GroupResource()))
	case !inNamespace && namespaced && t.name != "":
		return restTarget{}, notServed(path, fmt.Sprintf("%v is namespaced: its objects are under /namespaces/NAMESPACE/", t.gvr.GroupResource()))
	case t.subresource != "" && t.subresource != "status":
		return restTarget{}, notServed(path, fmt.Sprintf("the Fake's REST front serves no %s subresource", t.subresource))
	case t.subresource == "status" && !h.f.statusSubresource[t.gvr]:
		return restTarget{}, noStatusSubresource(t.gvr, t.name)
	}
	return t, nil
}

// knows reports whether the Fake serves gvr.
func (h *restFront) knows(gvr schema.GroupVersionResource) bool {
	_, ok := h.f.listKinds[gvr]
	return ok
}

// namespaced reports whether gvr is namespaced, as the Fake's RESTMapper
// says.
func (h *restFront) namespaced(gvr schema.GroupVersionResource) (bool, error) {
	gvk, err := h.f.mapper.KindFor(gvr)
	if err != nil {
		return false, apierrors.NewInternalError(err)
	}
	mapping, err := h.f.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return false, apierrors.NewInternalError(err)
	}
	return mapping.Scope.Name() == meta.RESTScopeNameNamespace, nil
}

// notServed is the 404 of a path the Fake does not serve.
func notServed(path, why string) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    http.StatusNotFound,
		Reason:  metav1.StatusReasonNotFound,
		Message: fmt.Sprintf("the server could not find the requested resource: %s: %s", path, why),
	}}
}
