package typed

import (
	"reflect"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/internal/share"
)

const (
	contentTypeProtobuf = runtime.ContentTypeProtobuf
	contentTypeJSON     = runtime.ContentTypeJSON
)

// protobufMessage is what apimachinery's protobuf serializer needs to decode
// into a type; the built-in API types have it, CRD Go types usually not.
type protobufMessage interface {
	Reset()
	Unmarshal([]byte) error
}

// supportsProtobuf reports whether objects of Go type typ (a pointer type)
// can be decoded from protobuf.
func supportsProtobuf(typ reflect.Type) bool {
	return typ.Implements(reflect.TypeFor[protobufMessage]())
}

// newRESTClient returns a REST client for one GroupVersion that decodes with
// the scheme's codecs, without conversion, into the scheme's Go types. It
// asks for protobuf first when the type can be decoded from it: the server
// answers protobuf for built-in resources and JSON for custom resources.
//
// It decodes per item (perItemSerializer): a list or watch event object
// that does not fit its Go type arrives as a *generic.Undecodable, in the
// place of that one object, instead of failing the whole list or ending the
// watch.
//
// The objects it decodes share what repeats with those decoded before them
// through sharer (nil: nothing shared): its decoder feeds informers only.
func newRESTClient(clients Clients, codecs serializer.CodecFactory, sharer *share.Sharer, gv schema.GroupVersion, protobuf bool) (rest.Interface, error) {
	return newRESTClientWith(clients, perItemSerializer{NegotiatedSerializer: codecs.WithoutConversion(), sharer: sharer}, gv, protobuf)
}

// restSource lists and watches through a typed REST client, as the
// generated informers do (cache.NewFilteredListWatchFromClient, WatchList
// semantics included).
func restSource(client rest.Interface) generic.Source {
	return func(gvr schema.GroupVersionResource, namespace string, tweak generic.TweakListOptionsFunc) cache.ListerWatcher {
		lw := cache.NewFilteredListWatchFromClient(client, gvr.Resource, namespace, func(options *metav1.ListOptions) {
			if tweak != nil {
				tweak(options)
			}
		})
		return cache.ToListWatcherWithWatchListSemantics(lw, client)
	}
}

// ignoreNamespaceWhenClusterScoped drops the factory's namespace for
// cluster-scoped resources, which live in no namespace, as the generated
// informers of cluster-scoped types do.
func ignoreNamespaceWhenClusterScoped(source generic.Source, clusterScoped func(schema.GroupVersionResource) bool) generic.Source {
	return func(gvr schema.GroupVersionResource, namespace string, tweak generic.TweakListOptionsFunc) cache.ListerWatcher {
		if clusterScoped(gvr) {
			namespace = metav1.NamespaceAll
		}
		return source(gvr, namespace, tweak)
	}
}
