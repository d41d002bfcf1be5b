package typed

import (
	"bytes"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/internal/share"
)

// perItemSerializer is the NegotiatedSerializer of the typed REST clients:
// the scheme's codecs, whose decoders decode per item (perItemDecoder). It is
// what makes one object that does not fit its Go type cost only itself, not
// the list or the watch it comes in. A decoder is all it changes: the
// REST client negotiates media types and encodes as with the codecs alone.
type perItemSerializer struct {
	runtime.NegotiatedSerializer
	// sharer, if not nil, makes every object decoded share what repeats
	// with the objects decoded before it (see perItemDecoder).
	sharer *share.Sharer
}

// DecoderToVersion wraps the codecs' decoder, which serves the REST
// client's list answers and the objects embedded in watch events alike.
func (s perItemSerializer) DecoderToVersion(decoder runtime.Decoder, gv runtime.GroupVersioner) runtime.Decoder {
	return perItemDecoder{inner: s.NegotiatedSerializer.DecoderToVersion(decoder, gv), sharer: s.sharer}
}

// perItemDecoder decodes exactly as inner does and costs nothing more while
// inner succeeds. Only when inner fails to decode an object of a kind it
// knows does it decode again, in pieces:
//
//   - a list yields a *metainternalversion.List with the list's ListMeta
//     (resourceVersion, continue, remainingItemCount), every item that
//     decodes as inner decodes it in the list, and a *generic.Undecodable
//     in the place of each item that does not;
//   - a single object (a watch event's) yields a *generic.Undecodable.
//
// Anything else fails as inner failed, with inner's error: data in a media
// type other than JSON or protobuf, a kind inner does not know, a
// metav1.Status, a list whose own metadata or framing is broken, a list
// whose items all decode, and any decoding into a caller's object (into
// != nil), where a substitute would leave the caller's object untouched
// without an error.
//
// An object decoded (a list: each of its items) shares what repeats with
// the objects decoded before it, through sharer if not nil
// (internal/share): equal strings are one string, and unless
// Clients.NoSharing, equal maps of strings, equal ResourceLists and equal
// managedFields fieldsV1 are one map or slice. The objects are equal to
// inner's in every other way. This decoder feeds informers only, whose
// objects client-go requires to be treated as read-only: the typed Client
// decodes with the plain codecs.
type perItemDecoder struct {
	inner  runtime.Decoder
	sharer *share.Sharer
}

func (d perItemDecoder) Decode(data []byte, defaults *schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	obj, gvk, err := d.inner.Decode(data, defaults, into)
	if err == nil || obj != nil || into != nil {
		if err == nil {
			d.sharer.Object(obj)
		}
		return obj, gvk, err
	}
	if decoded, kind, ok := d.decodePerItem(data, defaults, err); ok {
		d.sharer.Object(decoded)
		return decoded, kind, nil
	}
	return obj, gvk, err
}

// decodePerItem is the fallback of Decode, after inner failed with err.
func (d perItemDecoder) decodePerItem(data []byte, defaults *schema.GroupVersionKind, err error) (runtime.Object, *schema.GroupVersionKind, bool) {
	format, ok := wireFormatOf(data)
	if !ok {
		return nil, nil, false
	}
	gvk, kindErr := format.kindOf(data)
	if kindErr != nil || gvk.Kind == "" {
		return nil, nil, false
	}
	example, ok := d.example(format, gvk, defaults)
	switch {
	case !ok:
		return nil, nil, false
	case meta.IsListType(example):
		list, ok := d.decodeList(format, gvk, data, defaults)
		return list, &gvk, ok
	}
	return undecodable(format, gvk, data, err), &gvk, true
}

// example decodes an object of kind gvk with nothing but its kind set,
// through inner: it tells whether inner knows the kind, and if so whether
// it is a list. A metav1.Status is not an object to decode per item: it
// keeps inner's error.
func (d perItemDecoder) example(format wireFormat, gvk schema.GroupVersionKind, defaults *schema.GroupVersionKind) (runtime.Object, bool) {
	data, err := format.encodeKind(gvk)
	if err != nil {
		return nil, false
	}
	example, _, err := d.inner.Decode(data, defaults, nil)
	if err != nil {
		return nil, false
	}
	if _, isStatus := example.(*metav1.Status); isStatus {
		return nil, false
	}
	return example, true
}

// decodeList decodes the list data of kind gvk item by item. It fails
// unless the list's metadata reads and at least one item does not decode:
// if every item decodes, what made inner fail was not an item. The Raw of
// an Undecodable item is the item as the list holds it: for protobuf, the
// object's message, without the kind that only the list's envelope names.
func (d perItemDecoder) decodeList(format wireFormat, gvk schema.GroupVersionKind, data []byte, defaults *schema.GroupVersionKind) (runtime.Object, bool) {
	listMeta, items, err := format.splitList(data)
	if err != nil {
		return nil, false
	}
	list := &metainternalversion.List{ListMeta: listMeta, Items: make([]runtime.Object, 0, len(items))}
	failed := false
	for _, item := range items {
		obj, err := d.decodeItem(format, gvk, item, defaults)
		if err != nil {
			failed = true
			obj = undecodable(format, itemKind(format, gvk, item), item, err)
		}
		list.Items = append(list.Items, obj)
	}
	return list, failed
}

// decodeItem decodes one item of a list of kind gvk as inner decodes it
// within its list: as the only item of a list of that kind.
func (d perItemDecoder) decodeItem(format wireFormat, gvk schema.GroupVersionKind, item []byte, defaults *schema.GroupVersionKind) (runtime.Object, error) {
	data, err := format.encodeList(gvk, item)
	if err != nil {
		return nil, err
	}
	list, _, err := d.inner.Decode(data, defaults, nil)
	if err != nil {
		return nil, err
	}
	objs, err := meta.ExtractList(list)
	if err != nil {
		return nil, fmt.Errorf("typed: items of %v: %w", gvk, err)
	}
	if len(objs) != 1 {
		return nil, fmt.Errorf("typed: a %v of one item decoded as %d items", gvk, len(objs))
	}
	return objs[0], nil
}

// itemKind is the kind of an item of a list of kind listKind: the item's
// own if it names one (custom resources do), else the list's without its
// "List" suffix.
func itemKind(format wireFormat, listKind schema.GroupVersionKind, item []byte) schema.GroupVersionKind {
	if gvk, err := format.kindOf(item); err == nil && gvk.Kind != "" {
		return gvk
	}
	return listKind.GroupVersion().WithKind(strings.TrimSuffix(listKind.Kind, "List"))
}

// undecodable stands for the object data of kind gvk that did not decode.
// It copies data: decoders may reuse their buffers.
func undecodable(format wireFormat, gvk schema.GroupVersionKind, data []byte, err error) *generic.Undecodable {
	key := format.keyOf(data)
	return &generic.Undecodable{GVK: gvk, Namespace: key.namespace, Name: key.name, ResourceVersion: key.resourceVersion, Raw: bytes.Clone(data), Err: err}
}
