package metadata

import (
	"context"
	"reflect"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/tools/cache"

	"github.com/generic-informers/generic"
)

// MetadataSource returns a generic.Source that lists and watches through
// client, as client-go's metadatainformer.NewFilteredMetadataInformer does,
// WatchList semantics included (cache.ToListWatcherWithWatchListSemantics,
// which falls back to list and watch for clients that cannot stream, such
// as client-go's fake metadata client). Lists deliver a
// *metav1.PartialObjectMetadataList and watches *metav1.PartialObjectMetadata,
// so informers fed by it need no Converter.
//
// With a nil client, or a nil pointer of a client type, every list and watch
// fails with generic.ErrNilClient: the informers retry with backoff and never
// sync, and nothing panics.
//
// The Source is safe for concurrent use, as client is.
func MetadataSource(client metadata.Interface) generic.Source {
	return func(gvr schema.GroupVersionResource, namespace string, tweak generic.TweakListOptionsFunc) cache.ListerWatcher {
		if isNilClient(client) {
			return generic.FailingListerWatcher(generic.ErrNilClient)
		}
		resource := client.Resource(gvr).Namespace(namespace)
		return cache.ToListWatcherWithWatchListSemantics(&cache.ListWatch{
			ListWithContextFunc: func(ctx context.Context, options metav1.ListOptions) (runtime.Object, error) {
				applyTweak(tweak, &options)
				return resource.List(ctx, options)
			},
			WatchFuncWithContext: func(ctx context.Context, options metav1.ListOptions) (watch.Interface, error) {
				applyTweak(tweak, &options)
				return resource.Watch(ctx, options)
			},
		}, client)
	}
}

// isNilClient reports whether client is nil, also as a nil pointer in the
// interface (a *metadata.Client declared and never set), which would panic
// at the first list.
func isNilClient(client metadata.Interface) bool {
	if client == nil {
		return true
	}
	v := reflect.ValueOf(client)
	return v.Kind() == reflect.Pointer && v.IsNil()
}

func applyTweak(tweak generic.TweakListOptionsFunc, options *metav1.ListOptions) {
	if tweak != nil {
		tweak(options)
	}
}
