package bench

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	clientfeatures "k8s.io/client-go/features"
	clientfeaturestesting "k8s.io/client-go/features/testing"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/typed"
	genericunstructured "github.com/generic-informers/generic/unstructured"
)

// BenchmarkCacheSize measures how much live heap an informer's synced
// cache holds per object (B/object), and how long it takes to sync
// (alone-ns/op), for each contender, over the fixture of
// realisticpods_test.go: `objects` realistic Pods (resource=pods), and
// `objects` ConfigMaps of about 2 KiB whose payloads differ
// (resource=configmaps-unique: data that no sharing can fold), with
// client-go's WatchListClient feature on.
//
// Every contender caches the same objects (a label selector picks the
// fixture's) and is measured once per op in a process of its own
// (heapInChild's child): the live heap after two forced collections
// before the informer starts, with a warm client, and after it has synced,
// and the time from start to synced (alone-ns/op) and the CPU time the
// child spent on it (alone-cpu-ns/op: the client's work, which the API
// server's, in this process on the same cores, does not slow). ns/op is
// the child's whole run. peak-B/object is the highest heap the child
// held during the sync, sampled while it runs (see peakSampler), less the
// same baseline, divided by the objects: what a cold start needs, garbage
// not yet collected included, where B/object is what stays.
//
// The contenders: client-go's generated typed informer; this library's
// typed informer, sharing what repeats across objects at decode (the
// default) and not (typed.Clients.NoSharing), and with a compact store
// (generic.WithCompactStore(compactDecodedObjects), its decoded objects
// full once synced); its unstructured informer
// (typed.UnstructuredFor) and its metadata-only one (typed.MetadataFor);
// client-go's dynamicinformer and this library's drop-in for it; and a
// manager's caches, controller-runtime's and ctrlcache's
// (managerCacheContenders). The realistic Pods are measured with WatchList
// off too (resource=pods/watchlist=off), for the manager's caches only:
// issue 47's peak heap, with WatchList on and off.
func BenchmarkCacheSize(b *testing.B) {
	config := realisticServer(b)
	for _, set := range []struct {
		name     string
		gvr      schema.GroupVersionResource
		selector string
	}{
		{"pods", podsGVR, realisticPodsSelector},
		{"configmaps-unique", configMapsGVR, uniqueConfigMapsSelector},
	} {
		b.Run("resource="+set.name, func(b *testing.B) {
			seedResource(b, config, set.gvr)
			clientfeaturestesting.SetFeatureDuringTest(b, clientfeatures.WatchListClient, true)
			warmUpSelected(b, config, set.gvr, set.selector)
			measureCacheSizes(b, config, set.gvr, set.selector, cacheSizeContenders)
			if set.gvr != podsGVR {
				return
			}
			b.Run("watchlist=off", func(b *testing.B) {
				clientfeaturestesting.SetFeatureDuringTest(b, clientfeatures.WatchListClient, false)
				warmUpSelected(b, config, set.gvr, set.selector)
				measureCacheSizes(b, config, set.gvr, set.selector, managerCacheContenders)
			})
		})
	}
}

// measureCacheSizes measures each of contenders (measureCacheSize), a
// sub-benchmark of b each.
func measureCacheSizes(b *testing.B, config *rest.Config, gvr schema.GroupVersionResource, selector string, contenders []cacheSizeContender) {
	for _, c := range contenders {
		b.Run("contender="+c.name, func(b *testing.B) {
			measureCacheSize(b, config, gvr, selector, c.name)
		})
	}
}

// cacheSizeContender is one of BenchmarkCacheSize's informers: a syncer
// of the objects a label selector selects.
type cacheSizeContender struct {
	name string
	run  func(selector string) syncer
}

// cacheSizeContenders are BenchmarkCacheSize's informers, in the report's
// order: this library's and client-go's, then a manager's caches
// (managerCacheContenders).
var cacheSizeContenders = append([]cacheSizeContender{
	{"client-go-typed", clientGoSelectedSyncer},
	{"generic-typed", genericSelectedSyncer(false, typedInformerOf)},
	{"generic-typed-nosharing", genericSelectedSyncer(true, typedInformerOf)},
	{"generic-typed-compact", genericSelectedSyncer(false, typedInformerOf, generic.WithCompactStore(compactDecodedObjects))},
	{"generic-unstructured", genericSelectedSyncer(false, unstructuredInformerOf)},
	{"generic-metadata", genericSelectedSyncer(false, metadataInformerOf)},
	{"client-go-dynamic", dynamicSelectedSyncer(false)},
	{"generic-unstructured-dropin", dynamicSelectedSyncer(true)},
}, managerCacheContenders...)

// dynamicSelectedSyncer syncs client-go's dynamicinformer of gvr, or with
// dropIn this library's drop-in for it (package unstructured), both over
// client-go's dynamic client: objects as it decodes them (JSON).
func dynamicSelectedSyncer(dropIn bool) func(selector string) syncer {
	return func(selector string) syncer {
		return func(b *testing.B, ctx context.Context, config *rest.Config, gvr schema.GroupVersionResource) (<-chan struct{}, func()) {
			client := dynamic.NewForConfigOrDie(config)
			tweak := func(o *metav1.ListOptions) { o.LabelSelector = selector }
			var factory interface {
				ForResource(schema.GroupVersionResource) informers.GenericInformer
				Start(<-chan struct{})
				Shutdown()
			}
			if dropIn {
				factory = genericunstructured.NewFilteredDynamicSharedInformerFactory(client, 0, metav1.NamespaceAll, tweak)
			} else {
				factory = dynamicinformer.NewFilteredDynamicSharedInformerFactory(client, 0, metav1.NamespaceAll, tweak)
			}
			synced := syncedChannel(b, factory.ForResource(gvr).Informer())
			runCtx, cancel := context.WithCancel(ctx)
			factory.Start(runCtx.Done())
			return synced, func() { cancel(); factory.Shutdown() }
		}
	}
}

// measureCacheSize measures contender in a child process at every op, and
// reports the mean heap per object, peak heap per object and sync time.
func measureCacheSize(b *testing.B, config *rest.Config, gvr schema.GroupVersionResource, selector, contender string) {
	var heap, peak uint64
	var took, cpu time.Duration
	var runs int
	for b.Loop() {
		m := runHeapChild(b, heapRequest{
			Contender: contender, Resource: gvr, Selector: selector,
			WatchList: clientfeatures.FeatureGates().Enabled(clientfeatures.WatchListClient),
			Server:    addressOf(config),
		})
		heap += m.heap
		peak += m.peak
		took += m.sync
		cpu += m.cpu
		runs++
	}
	b.ReportMetric(float64(heap)/float64(runs)/float64(objects), "B/object")
	b.ReportMetric(float64(peak)/float64(runs)/float64(objects), "peak-B/object")
	b.ReportMetric(float64(took.Nanoseconds())/float64(runs), "alone-ns/op")
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(runs), "alone-cpu-ns/op")
}

// warmUpSelected syncs one informer of the selected objects, unmeasured,
// so that the API server has their encodings cached before the first
// measured child.
func warmUpSelected(b *testing.B, config *rest.Config, gvr schema.GroupVersionResource, selector string) {
	synced, stop := genericSelectedSyncer(false, typedInformerOf)(selector)(b, context.Background(), config, gvr)
	waitSynced(b, synced)
	stop()
}

// clientGoSelectedSyncer syncs client-go's generated informer of gvr.
func clientGoSelectedSyncer(selector string) syncer {
	return func(b *testing.B, ctx context.Context, config *rest.Config, gvr schema.GroupVersionResource) (<-chan struct{}, func()) {
		factory := informers.NewSharedInformerFactoryWithOptions(kubernetes.NewForConfigOrDie(config), 0,
			informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = selector }))
		informer, err := factory.ForResource(gvr)
		if err != nil {
			b.Fatal(err)
		}
		synced := syncedChannel(b, informer.Informer())
		runCtx, cancel := context.WithCancel(ctx)
		factory.Start(runCtx.Done())
		return synced, func() { cancel(); factory.Shutdown() }
	}
}

// informerOf returns one of a typed Factory's informers of gvr.
type informerOf func(factory *typed.Factory, gvr schema.GroupVersionResource) (toolscache.SharedIndexInformer, error)

// genericSelectedSyncer syncs the informer that informerOf returns, of a
// typed Factory of its own limited to selector, with sharing off if
// noSharing.
func genericSelectedSyncer(noSharing bool, informerOf informerOf, opts ...generic.FactoryOption) func(selector string) syncer {
	return func(selector string) syncer {
		return func(b *testing.B, ctx context.Context, config *rest.Config, gvr schema.GroupVersionResource) (<-chan struct{}, func()) {
			factory, err := typed.NewFactoryForClients(typed.Clients{Config: config, NoSharing: noSharing}, scheme, append([]generic.FactoryOption{generic.WithLabelSelector(selector)}, opts...)...)
			if err != nil {
				b.Fatal(err)
			}
			informer, err := informerOf(factory, gvr)
			if err != nil {
				b.Fatal(err)
			}
			factory.Start(ctx)
			return syncedChannel(b, informer), factory.Shutdown
		}
	}
}

// typedInformerOf returns the typed informer of Pods or ConfigMaps.
func typedInformerOf(factory *typed.Factory, gvr schema.GroupVersionResource) (toolscache.SharedIndexInformer, error) {
	if gvr == podsGVR {
		return handleInformer(typed.InformerFor[*corev1.Pod](factory))
	}
	return handleInformer(typed.InformerFor[*corev1.ConfigMap](factory))
}

func unstructuredInformerOf(factory *typed.Factory, gvr schema.GroupVersionResource) (toolscache.SharedIndexInformer, error) {
	return handleInformer(typed.UnstructuredFor(factory, gvr))
}

func metadataInformerOf(factory *typed.Factory, gvr schema.GroupVersionResource) (toolscache.SharedIndexInformer, error) {
	return handleInformer(typed.MetadataFor(factory, gvr))
}

// handleInformer returns handle's informer, or err.
func handleInformer[T generic.Object](handle generic.Handle[T], err error) (toolscache.SharedIndexInformer, error) {
	if err != nil {
		return nil, err
	}
	return handle.Informer(), nil
}
