package generictest

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// restHost is the host of the Config's URL: any request goes to the
// Fake's handler, in process, whatever the host.
const restHost = "http://generictest.fake"

// Config returns a rest.Config for clients made by the code under test
// (kubernetes.NewForConfig, dynamic.NewForConfig, typed.ClientFor, a REST
// client of a custom resource): its Transport serves the Fake's store in
// process, with no socket and no goroutine, as an API server would serve
// the REST API (/api/v1/..., /apis/GROUP/VERSION/..., namespaced and
// cluster-scoped):
//
//   - GET of an object, and of a collection (a list, with its
//     labelSelector and fieldSelector);
//   - POST (create), PUT (update; PUT of .../status updates the status
//     subresource), PATCH (JSON, merge, strategic merge and apply patches,
//     of the object or its status), DELETE of an object (with its
//     DeleteOptions and their preconditions) or of a collection.
//
// Request bodies may be JSON (or YAML) or protobuf (client-go sends
// protobuf for built-in types when ContentType is
// "application/vnd.kubernetes.protobuf"). Every request is served by the
// fake dynamic client (Dynamic), so that its reactors (the test's too)
// apply, writes are checked and stamped as every other client's, and
// informers see them. Responses are JSON; errors are a metav1.Status with
// the status code of the API error (404, 409, 422...). Watches are
// refused (405): watch through Dynamic or Clientset. Paths the Fake does
// not serve, discovery's included, are 404. Writes do not wait for
// handlers: Settle does.
//
// Each call returns a new Config, which the caller may change
// (ContentType, for example); all serve the one store, and are safe for
// concurrent use. Client-side rate limiting is off (QPS < 0).
func (f *Fake) Config() *rest.Config {
	return &rest.Config{Host: restHost, Transport: &inProcessTransport{handler: f.front}, QPS: -1}
}

// inProcessTransport serves each request with handler, in the caller's
// goroutine, recording the response.
type inProcessTransport struct {
	handler http.Handler
}

func (t *inProcessTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		defer req.Body.Close()
	}
	if err := req.Context().Err(); err != nil {
		return nil, err
	}
	recorder := httptest.NewRecorder()
	t.handler.ServeHTTP(recorder, req)
	resp := recorder.Result()
	resp.Request = req
	return resp, nil
}

// restFront is the Fake's REST API: an http.Handler that serves each
// request through the fake dynamic client.
type restFront struct {
	f        *Fake
	decoders []schemeDecoder

	mu sync.Mutex
	// requests are the method, path and body's media type of every
	// request served, for tests.
	requests []string
}

func newRESTFront(f *Fake) *restFront { return &restFront{f: f, decoders: schemeDecoders(f.scheme)} }

func (h *restFront) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	served := req.Method + " " + req.URL.Path
	if mediaType := mediaTypeOf(req); mediaType != "" {
		served += " " + mediaType
	}
	h.mu.Lock()
	h.requests = append(h.requests, served)
	h.mu.Unlock()
	target, err := h.resolve(req.URL.Path)
	if err != nil {
		writeError(w, err)
		return
	}
	code, obj, err := h.serve(req, target)
	if err != nil {
		writeError(w, err)
		return
	}
	writeObject(w, code, obj)
}

// served returns the method, path and body's media type (if any) of every
// request served so far.
func (h *restFront) served() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.requests...)
}

// serve serves req, of target, and returns the status code and object of
// the response.
func (h *restFront) serve(req *http.Request, target restTarget) (int, runtime.Object, error) {
	ctx := req.Context()
	resource := target.client(h.f.client)
	var subresources []string
	if target.subresource != "" {
		subresources = []string{target.subresource}
	}
	if target.namespaced && target.namespace == "" && req.Method != http.MethodGet {
		// Only lists span namespaces.
		return 0, nil, apierrors.NewMethodNotSupported(target.gvr.GroupResource(), req.Method+" in all namespaces")
	}
	switch {
	case req.Method == http.MethodGet && target.name != "":
		var opts metav1.GetOptions
		if err := decodeQuery(req, &opts); err != nil {
			return 0, nil, err
		}
		obj, err := resource.Get(ctx, target.name, opts, subresources...)
		return http.StatusOK, obj, err
	case req.Method == http.MethodGet:
		return h.list(ctx, req, target, resource)
	case req.Method == http.MethodPost && target.name == "":
		return h.create(ctx, req, target, resource)
	case req.Method == http.MethodPut && target.name != "":
		return h.update(ctx, req, target, resource)
	case req.Method == http.MethodPatch && target.name != "":
		pt, err := patchTypeOf(req)
		if err != nil {
			return 0, nil, err
		}
		var opts metav1.PatchOptions
		if err := decodeQuery(req, &opts); err != nil {
			return 0, nil, err
		}
		body, err := readBody(req)
		if err != nil {
			return 0, nil, err
		}
		obj, err := resource.Patch(ctx, target.name, pt, body, opts, subresources...)
		return http.StatusOK, obj, err
	case req.Method == http.MethodDelete && target.subresource == "":
		return h.delete(ctx, req, target, resource)
	}
	return 0, nil, apierrors.NewMethodNotSupported(target.gvr.GroupResource(), req.Method)
}

// list serves a list; a watch is refused.
func (h *restFront) list(ctx context.Context, req *http.Request, target restTarget, resource dynamic.ResourceInterface) (int, runtime.Object, error) {
	var opts metav1.ListOptions
	if err := decodeQuery(req, &opts); err != nil {
		return 0, nil, err
	}
	if opts.Watch {
		return 0, nil, noWatches(target)
	}
	if err := checkSelectors(opts); err != nil {
		return 0, nil, err
	}
	list, err := resource.List(ctx, opts)
	if err != nil {
		return 0, nil, err
	}
	if list.GetKind() == "" {
		list.SetGroupVersionKind(target.gvr.GroupVersion().WithKind(h.f.listKinds[target.gvr]))
	}
	return http.StatusOK, list, nil
}

func (h *restFront) create(ctx context.Context, req *http.Request, target restTarget, resource dynamic.ResourceInterface) (int, runtime.Object, error) {
	var opts metav1.CreateOptions
	if err := decodeQuery(req, &opts); err != nil {
		return 0, nil, err
	}
	obj, err := h.decodeObject(req, target)
	if err != nil {
		return 0, nil, err
	}
	created, err := resource.Create(ctx, obj, opts)
	return http.StatusCreated, created, err
}

func (h *restFront) update(ctx context.Context, req *http.Request, target restTarget, resource dynamic.ResourceInterface) (int, runtime.Object, error) {
	var opts metav1.UpdateOptions
	if err := decodeQuery(req, &opts); err != nil {
		return 0, nil, err
	}
	obj, err := h.decodeObject(req, target)
	if err != nil {
		return 0, nil, err
	}
	var updated *unstructured.Unstructured
	if target.subresource == "status" {
		updated, err = resource.UpdateStatus(ctx, obj, opts)
	} else {
		updated, err = resource.Update(ctx, obj, opts)
	}
	return http.StatusOK, updated, err
}

// delete deletes an object, or a collection, with the request's
// DeleteOptions (its body, else its query).
func (h *restFront) delete(ctx context.Context, req *http.Request, target restTarget, resource dynamic.ResourceInterface) (int, runtime.Object, error) {
	opts, err := deleteOptionsOf(req)
	if err != nil {
		return 0, nil, err
	}
	if target.name == "" {
		var listOpts metav1.ListOptions
		if err := decodeQuery(req, &listOpts); err != nil {
			return 0, nil, err
		}
		if err := checkSelectors(listOpts); err != nil {
			return 0, nil, err
		}
		err = resource.DeleteCollection(ctx, opts, listOpts)
	} else {
		err = resource.Delete(ctx, target.name, opts)
	}
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, &metav1.Status{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Status"},
		Status:   metav1.StatusSuccess,
		Code:     http.StatusOK,
		Details:  &metav1.StatusDetails{Group: target.gvr.Group, Kind: target.gvr.Resource, Name: target.name},
	}, nil
}

// noWatches is the answer to a watch: the REST front does not serve them.
func noWatches(target restTarget) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    http.StatusMethodNotAllowed,
		Reason:  metav1.StatusReasonMethodNotAllowed,
		Details: &metav1.StatusDetails{Group: target.gvr.Group, Kind: target.gvr.Resource},
		Message: "generictest: the Fake's REST front (Config) does not serve watches; watch through Fake.Dynamic or Fake.Clientset",
	}}
}
