package typed

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utiljson "k8s.io/apimachinery/pkg/util/json"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/internal/share"
)

// unstructuredSerializer is the NegotiatedSerializer of the REST clients
// behind UnstructuredFor's informers. Every object it decodes is an
// *unstructured.Unstructured (a list, an *unstructured.UnstructuredList),
// equal to what client-go's dynamic client decodes from JSON:
//
//   - JSON is decoded in one pass (jsonToUnstructured), where
//     apimachinery's UnstructuredJSONScheme reads a list four times and
//     builds every item's maps twice;
//   - protobuf, which the REST client asks for only for built-in kinds the
//     scheme knows (see Factory.protobufForUnstructured), is decoded into
//     the scheme's Go type and converted once (protobufToUnstructured).
//
// Each object decoded is then interned (interner, nil for none). Watch
// event envelopes are read by the scheme codecs' stream serializers, as for
// the typed informers.
type unstructuredSerializer struct {
	infos []runtime.SerializerInfo
}

func newUnstructuredSerializer(codecs serializer.CodecFactory, in *share.Interner) unstructuredSerializer {
	var infos []runtime.SerializerInfo
	for _, info := range codecs.WithoutConversion().SupportedMediaTypes() {
		switch info.MediaType {
		case runtime.ContentTypeJSON:
			info.Serializer = jsonToUnstructured{Encoder: unstructured.UnstructuredJSONScheme, interner: in}
		case runtime.ContentTypeProtobuf:
			info.Serializer = protobufToUnstructured{Encoder: info.Serializer, inner: perItemDecoder{inner: info.Serializer}, interner: in}
		default:
			continue
		}
		info.PrettySerializer, info.StrictSerializer = nil, nil
		infos = append(infos, info)
	}
	return unstructuredSerializer{infos: infos}
}

func (s unstructuredSerializer) SupportedMediaTypes() []runtime.SerializerInfo { return s.infos }

// EncoderForVersion leaves encoding as it is: informers only list and watch.
func (unstructuredSerializer) EncoderForVersion(encoder runtime.Encoder, _ runtime.GroupVersioner) runtime.Encoder {
	return encoder
}

// DecoderToVersion converts nothing, as client-go's dynamic client does not.
func (unstructuredSerializer) DecoderToVersion(decoder runtime.Decoder, _ runtime.GroupVersioner) runtime.Decoder {
	return decoder
}

// jsonToUnstructured decodes JSON as unstructured.UnstructuredJSONScheme
// does (integers int64, other numbers float64, through apimachinery's
// util/json), in one pass: the whole document into one map, whose "items",
// if it has them, become the list's items. A metav1.Status (an error
// answer, or a watch's ERROR event) decodes into *metav1.Status, as the
// dynamic client decodes it, so that client-go's error handling (410 Gone
// and the like) sees it; whatever the factory's scheme holds.
type jsonToUnstructured struct {
	runtime.Encoder
	interner *share.Interner
}

func (d jsonToUnstructured) Decode(data []byte, defaults *schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	if into != nil {
		return unstructured.UnstructuredJSONScheme.Decode(data, defaults, into)
	}
	var content map[string]any
	if err := utiljson.Unmarshal(data, &content); err != nil {
		return nil, nil, err
	}
	obj, err := unstructuredFromJSON(content)
	if err != nil {
		return nil, nil, err
	}
	gvk := obj.GetObjectKind().GroupVersionKind()
	switch {
	case gvk.Kind == "":
		return nil, &gvk, runtime.NewMissingKindErr(string(data))
	case gvk == metav1.SchemeGroupVersion.WithKind("Status"):
		status := &metav1.Status{}
		if err := utiljson.Unmarshal(data, status); err != nil {
			return nil, &gvk, err
		}
		return status, &gvk, nil
	}
	internJSON(d.interner, obj)
	return obj, &gvk, nil
}

// internJSON interns obj, decoded from JSON, or each item of obj if it is
// a list. encoding/json grows each map to its size: no resizing.
func internJSON(in *share.Interner, obj runtime.Object) {
	switch obj := obj.(type) {
	case *unstructured.Unstructured:
		obj.Object = in.Object(obj.Object, share.KeepMaps, nil)
	case *unstructured.UnstructuredList:
		for i := range obj.Items {
			obj.Items[i].Object = in.Object(obj.Items[i].Object, share.KeepMaps, nil)
		}
	}
}

// unstructuredFromJSON makes an object of content, decoded JSON: a list if
// it has "items" (as UnstructuredJSONScheme tells one), whose items that
// name no kind get the list's kind without "List" and its apiVersion.
func unstructuredFromJSON(content map[string]any) (runtime.Object, error) {
	rawItems, isList := content["items"]
	if !isList {
		return &unstructured.Unstructured{Object: content}, nil
	}
	delete(content, "items")
	list := &unstructured.UnstructuredList{Object: content}
	items, ok := rawItems.([]any)
	if rawItems != nil && !ok {
		return nil, fmt.Errorf("typed: the items of a %s are a JSON %T, not an array", list.GetKind(), rawItems)
	}
	list.Items = make([]unstructured.Unstructured, len(items))
	for i, item := range items {
		object, ok := item.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("typed: item %d of a %s is a JSON %T, not an object", i, list.GetKind(), item)
		}
		list.Items[i].Object = object
	}
	setItemKinds(list)
	return list, nil
}

// setItemKinds gives every item of list that names no kind and no
// apiVersion the list's, as UnstructuredJSONScheme does: the API server
// leaves them out of the items of built-in lists.
func setItemKinds(list *unstructured.UnstructuredList) {
	apiVersion, kind := list.GetAPIVersion(), strings.TrimSuffix(list.GetKind(), "List")
	for i := range list.Items {
		item := &list.Items[i]
		if item.GetKind() == "" && item.GetAPIVersion() == "" {
			item.SetKind(kind)
			item.SetAPIVersion(apiVersion)
		}
	}
}

// protobufToUnstructured decodes protobuf into the scheme's Go types, per
// item (perItemDecoder: an item that does not decode stays a
// *generic.Undecodable and costs only itself), and converts each object
// once with runtime.DefaultUnstructuredConverter, which yields the same
// maps as decoding the object's JSON (the built-in types have no
// floating-point fields, the one place the two differ). A
// *metav1.Status stays as it is.
type protobufToUnstructured struct {
	runtime.Encoder
	inner    runtime.Decoder
	interner *share.Interner
}

func (d protobufToUnstructured) Decode(data []byte, defaults *schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	if into != nil {
		return nil, nil, fmt.Errorf("typed: protobuf cannot be decoded into a %T", into)
	}
	obj, gvk, err := d.inner.Decode(data, defaults, nil)
	if err != nil {
		return nil, gvk, err
	}
	switch obj.(type) {
	case *metav1.Status, *generic.Undecodable:
		return obj, gvk, nil
	}
	if meta.IsListType(obj) {
		list, err := listToUnstructured(obj, *gvk, d.interner)
		return list, gvk, err
	}
	return itemToUnstructured(obj, *gvk, d.interner), gvk, nil
}

// toUnstructured converts obj, a decoded object of kind gvk, and interns
// it (in, nil for none). The fieldsV1 of its managedFields that are JSON
// objects, all that the API server writes, are taken out before the
// conversion (interner.detachFieldsV1), shared or decoded there:
// runtime.DefaultUnstructuredConverter would encode each to JSON and
// decode it again.
func toUnstructured(obj runtime.Object, gvk schema.GroupVersionKind, in *share.Interner) (*unstructured.Unstructured, error) {
	fieldsV1 := in.DetachFieldsV1(obj)
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, fmt.Errorf("typed: %v to unstructured: %w", gvk, err)
	}
	// The kind and apiVersion are set before interning, so that every
	// object shares one string of each instead of boxing its own.
	content["apiVersion"], content["kind"] = gvk.GroupVersion().String(), gvk.Kind
	return &unstructured.Unstructured{Object: in.Object(content, share.RemakeAll, fieldsV1)}, nil
}

// listToUnstructured converts list, a decoded list of kind gvk, item by
// item. Its items arrive without a kind, as the API server sends them;
// each gets the list's without "List", as from JSON. If an item did not
// decode or convert, the list is a *metainternalversion.List holding, in
// order, the converted items and a *generic.Undecodable for each of those,
// as the typed informers' lists are.
func listToUnstructured(list runtime.Object, gvk schema.GroupVersionKind, in *share.Interner) (runtime.Object, error) {
	listMeta, err := meta.ListAccessor(list)
	if err != nil {
		return nil, err
	}
	objs, err := meta.ExtractList(list)
	if err != nil {
		return nil, err
	}
	itemKind := gvk.GroupVersion().WithKind(strings.TrimSuffix(gvk.Kind, "List"))
	out := &unstructured.UnstructuredList{Items: make([]unstructured.Unstructured, 0, len(objs))}
	out.SetGroupVersionKind(gvk)
	out.SetResourceVersion(listMeta.GetResourceVersion())
	if c := listMeta.GetContinue(); c != "" {
		out.SetContinue(c)
	}
	out.SetRemainingItemCount(listMeta.GetRemainingItemCount())
	converted := make([]runtime.Object, len(objs))
	failed := false
	for i, obj := range objs {
		converted[i] = itemToUnstructured(obj, itemKind, in)
		if u, ok := converted[i].(*unstructured.Unstructured); ok {
			out.Items = append(out.Items, *u)
		} else {
			failed = true
		}
	}
	if !failed {
		return out, nil
	}
	return &metainternalversion.List{ListMeta: metav1.ListMeta{
		ResourceVersion:    out.GetResourceVersion(),
		Continue:           out.GetContinue(),
		RemainingItemCount: out.GetRemainingItemCount(),
	}, Items: converted}, nil
}

// itemToUnstructured converts obj, a decoded object of kind gvk; an
// Undecodable stays as it is, and one that does not convert becomes one.
func itemToUnstructured(obj runtime.Object, gvk schema.GroupVersionKind, in *share.Interner) runtime.Object {
	if u, ok := obj.(*generic.Undecodable); ok {
		return u
	}
	u, err := toUnstructured(obj, gvk, in)
	if err != nil {
		undecodable := &generic.Undecodable{GVK: gvk, Err: err}
		if m, metaErr := meta.Accessor(obj); metaErr == nil {
			undecodable.Namespace, undecodable.Name, undecodable.ResourceVersion = m.GetNamespace(), m.GetName(), m.GetResourceVersion()
		}
		return undecodable
	}
	return u
}
