package generictest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversionscheme "k8s.io/apimachinery/pkg/apis/meta/internalversion/scheme"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
)

// How the REST front reads requests and writes responses.

// protobufPrefix starts every protobuf body of the Kubernetes API: the
// envelope (a runtime.Unknown) follows it.
var protobufPrefix = []byte{0x6b, 0x38, 0x73, 0x00}

// mediaTypeOf returns the media type of req's body, without parameters.
func mediaTypeOf(req *http.Request) string {
	mediaType, _, err := mime.ParseMediaType(req.Header.Get("Content-Type"))
	if err != nil {
		return ""
	}
	return mediaType
}

func readBody(req *http.Request) ([]byte, error) {
	if req.Body == nil {
		return nil, nil
	}
	body, err := io.ReadAll(req.Body)
	if err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("reading the body: %v", err))
	}
	return body, nil
}

// decodeQuery reads the options of a request (ListOptions, GetOptions,
// CreateOptions...) from its query, as kube-apiserver does.
func decodeQuery(req *http.Request, into runtime.Object) error {
	if err := metainternalversionscheme.ParameterCodec.DecodeParameters(req.URL.Query(), metav1.SchemeGroupVersion, into); err != nil {
		return apierrors.NewBadRequest(err.Error())
	}
	return nil
}

// patchTypeOf returns the patch type a PATCH request's Content-Type names.
func patchTypeOf(req *http.Request) (types.PatchType, error) {
	switch pt := types.PatchType(mediaTypeOf(req)); pt {
	case types.JSONPatchType, types.MergePatchType, types.StrategicMergePatchType, types.ApplyPatchType:
		return pt, nil
	}
	return "", unsupportedMediaType(req)
}

// deleteOptionsOf reads the DeleteOptions of a DELETE request: its body
// (JSON or protobuf) if it has one, else its query.
func deleteOptionsOf(req *http.Request) (metav1.DeleteOptions, error) {
	var opts metav1.DeleteOptions
	body, err := readBody(req)
	if err != nil {
		return opts, err
	}
	switch {
	case len(body) == 0:
		err = decodeQuery(req, &opts)
	case bytes.HasPrefix(body, protobufPrefix):
		var envelope runtime.Unknown
		if err = envelope.Unmarshal(body[len(protobufPrefix):]); err == nil {
			err = opts.Unmarshal(envelope.Raw)
		}
	default:
		err = json.Unmarshal(body, &opts)
	}
	if err != nil {
		return opts, apierrors.NewBadRequest(fmt.Sprintf("DeleteOptions: %v", err))
	}
	return opts, nil
}

// decodeObject reads the object of a POST or PUT to target: JSON (or
// YAML), or protobuf of a Go type of the Fake's scheme or client-go's. It
// checks its kind, namespace and name against the path's, as
// kube-apiserver does.
func (h *restFront) decodeObject(req *http.Request, target restTarget) (*unstructured.Unstructured, error) {
	body, err := readBody(req)
	if err != nil {
		return nil, err
	}
	var u *unstructured.Unstructured
	switch mediaTypeOf(req) {
	case runtime.ContentTypeProtobuf:
		u, err = h.decodeProtobuf(body)
	case runtime.ContentTypeJSON, runtime.ContentTypeYAML, "":
		u, err = decodeJSON(body)
	default:
		return nil, unsupportedMediaType(req)
	}
	if err != nil {
		return nil, err
	}
	gvk, err := h.f.mapper.KindFor(target.gvr)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	switch {
	case u.GetKind() == "" && u.GetAPIVersion() == "":
		u.SetGroupVersionKind(gvk)
	case u.GroupVersionKind() != gvk:
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the object is a %v, not a %v: the kind of %v", u.GroupVersionKind(), gvk, target.gvr.GroupResource()))
	}
	switch {
	case !target.namespaced:
		u.SetNamespace("")
	case u.GetNamespace() == "":
		u.SetNamespace(target.namespace)
	case u.GetNamespace() != target.namespace:
		return nil, apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
	}
	if target.name != "" && u.GetName() != target.name {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", u.GetName(), target.name))
	}
	return u, nil
}

// decodeJSON reads a JSON or YAML object, its integers as int64, as the
// dynamic client has them.
func decodeJSON(body []byte) (*unstructured.Unstructured, error) {
	data, err := utilyaml.ToJSON(body)
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	var content map[string]any
	if err := utiljson.Unmarshal(data, &content); err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	if content == nil {
		return nil, apierrors.NewBadRequest("the body holds no object")
	}
	return &unstructured.Unstructured{Object: content}, nil
}

// schemeDecoder decodes the objects of a scheme, of any serialization.
type schemeDecoder struct {
	scheme  *runtime.Scheme
	decoder runtime.Decoder
}

// schemeDecoders decode the objects of the Fake's scheme, then of
// client-go's.
func schemeDecoders(scheme *runtime.Scheme) []schemeDecoder {
	return []schemeDecoder{
		{scheme, serializer.NewCodecFactory(scheme).UniversalDeserializer()},
		{clientgoscheme.Scheme, clientgoscheme.Codecs.UniversalDeserializer()},
	}
}

// decodeProtobuf reads a protobuf object of a Go type of the Fake's scheme,
// or else of client-go's, as unstructured.
func (h *restFront) decodeProtobuf(body []byte) (*unstructured.Unstructured, error) {
	for _, d := range h.decoders {
		obj, _, err := d.decoder.Decode(body, nil, nil)
		if runtime.IsNotRegisteredError(err) {
			continue
		}
		if err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
		u, err := toUnstructuredIn(d.scheme, obj)
		if err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
		return u, nil
	}
	return nil, apierrors.NewBadRequest("the protobuf body is of a kind neither the Fake's scheme nor client-go's registers")
}

func unsupportedMediaType(req *http.Request) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    http.StatusUnsupportedMediaType,
		Reason:  metav1.StatusReasonUnsupportedMediaType,
		Message: fmt.Sprintf("the body of a %s of %s may not be %q", req.Method, req.URL.Path, req.Header.Get("Content-Type")),
	}}
}

// writeObject writes obj as the JSON response, with code.
func writeObject(w http.ResponseWriter, code int, obj runtime.Object) {
	data, err := json.Marshal(obj)
	if err != nil {
		writeError(w, apierrors.NewInternalError(err))
		return
	}
	w.Header().Set("Content-Type", runtime.ContentTypeJSON)
	w.WriteHeader(code)
	_, _ = w.Write(data)
}

// writeError writes err as a metav1.Status, with its status code: that of
// an API error, 500 for any other.
func writeError(w http.ResponseWriter, err error) {
	var apiStatus apierrors.APIStatus
	var status metav1.Status
	if errors.As(err, &apiStatus) {
		status = apiStatus.Status()
	} else {
		status = apierrors.NewInternalError(err).ErrStatus
	}
	status.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Status"}
	if status.Status == "" {
		status.Status = metav1.StatusFailure
	}
	if status.Code == 0 {
		status.Code = http.StatusInternalServerError
	}
	data, err := json.Marshal(&status)
	if err != nil {
		data = []byte(`{"apiVersion":"v1","kind":"Status","status":"Failure","code":500}`)
		status.Code = http.StatusInternalServerError
	}
	w.Header().Set("Content-Type", runtime.ContentTypeJSON)
	w.WriteHeader(int(status.Code))
	_, _ = w.Write(data)
}
