package generic

import (
	"context"
	"errors"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/tools/cache"
)

// Source makes the cache.ListerWatcher through which an informer lists and
// watches one resource. namespace is the namespace to watch, or
// metav1.NamespaceAll (""); tweak, when not nil, must be applied to the
// options of every list and watch request.
//
// A Source that cannot serve gvr returns a ListerWatcher whose calls fail
// with a clear error: the informer then retries with client-go's backoff and
// never syncs, and nothing panics.
//
// A Factory calls its Source from Acquire with the Factory's lock held,
// so a Source must not call back into the Factory. The ListerWatcher it
// returns is used by one informer's reflector at a time.
type Source func(gvr schema.GroupVersionResource, namespace string, tweak TweakListOptionsFunc) cache.ListerWatcher

// ErrNilClient is returned by every list and watch of a Source built on a nil
// client (nil, or a nil pointer of a client type).
var ErrNilClient = errors.New("generic: nil client")

// DynamicSource returns a Source that lists and watches through client, as
// client-go's dynamicinformer.NewFilteredDynamicInformer does, WatchList
// semantics included (cache.ToListWatcherWithWatchListSemantics). It
// delivers *unstructured.Unstructured objects. With a nil client (nil, or a
// nil pointer of a client type, as from a failed dynamic.NewForConfig),
// every list and watch fails with ErrNilClient.
func DynamicSource(client dynamic.Interface) Source {
	return func(gvr schema.GroupVersionResource, namespace string, tweak TweakListOptionsFunc) cache.ListerWatcher {
		if client == nil || isNilPointer(client) {
			return FailingListerWatcher(ErrNilClient)
		}
		resource := client.Resource(gvr).Namespace(namespace)
		return clientListWatch(resource.List, resource.Watch, tweak, client)
	}
}

// MetadataSource returns a Source that lists and watches through client, as
// client-go's metadatainformer.NewFilteredMetadataInformer does, WatchList
// semantics included (falling back to list and watch for clients that
// cannot stream, such as client-go's fake metadata client). It delivers
// *metav1.PartialObjectMetadata objects, so informers fed by it need no
// Converter. With a nil client, every list and watch fails with
// ErrNilClient.
func MetadataSource(client metadata.Interface) Source {
	return func(gvr schema.GroupVersionResource, namespace string, tweak TweakListOptionsFunc) cache.ListerWatcher {
		if client == nil || isNilPointer(client) {
			return FailingListerWatcher(ErrNilClient)
		}
		resource := client.Resource(gvr).Namespace(namespace)
		return clientListWatch(resource.List, resource.Watch, tweak, client)
	}
}

// clientListWatch is the ListerWatcher of a client's resource, its list
// and watch, with tweak applied to every request, and the WatchList
// semantics the client supports.
func clientListWatch[L runtime.Object](list func(context.Context, metav1.ListOptions) (L, error), watchFunc cache.WatchFuncWithContext, tweak TweakListOptionsFunc, client any) cache.ListerWatcher {
	return cache.ToListWatcherWithWatchListSemantics(&cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, options metav1.ListOptions) (runtime.Object, error) {
			applyTweak(tweak, &options)
			l, err := list(ctx, options)
			if err != nil {
				return nil, err
			}
			return l, nil
		},
		WatchFuncWithContext: func(ctx context.Context, options metav1.ListOptions) (watch.Interface, error) {
			applyTweak(tweak, &options)
			return watchFunc(ctx, options)
		},
	}, client)
}

// FailingListerWatcher returns a ListerWatcher whose every list and watch
// fails with err. Sources return it for input they cannot serve.
func FailingListerWatcher(err error) cache.ListerWatcher {
	return &cache.ListWatch{
		ListWithContextFunc: func(context.Context, metav1.ListOptions) (runtime.Object, error) {
			return nil, err
		},
		WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watch.Interface, error) {
			return nil, err
		},
	}
}

func applyTweak(tweak TweakListOptionsFunc, options *metav1.ListOptions) {
	if tweak != nil {
		tweak(options)
	}
}
