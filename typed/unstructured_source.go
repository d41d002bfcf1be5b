package typed

import (
	"context"
	"fmt"
	"reflect"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/generic-informers/generic"
)

// unstructuredSource is the Source of UnstructuredFor's informers when the
// factory has a rest.Config and no dynamic client: a REST client per
// GroupVersion that decodes into *unstructured.Unstructured
// (unstructuredSerializer), asking for protobuf where protobufForUnstructured
// allows it. The client is chosen at the informer's first list or watch
// (lazyListerWatcher): protobufForUnstructured asks the server its version,
// and nothing talks to the server before Start.
func (f *Factory) unstructuredSource() generic.Source {
	return func(gvr schema.GroupVersionResource, namespace string, tweak generic.TweakListOptionsFunc) cache.ListerWatcher {
		return &lazyListerWatcher{make: func() cache.ListerWatcher {
			client, err := f.unstructuredRESTClientFor(gvr.GroupVersion())
			if err != nil {
				return generic.FailingListerWatcher(err)
			}
			return restSource(client)(gvr, namespace, tweak)
		}}
	}
}

// lazyListerWatcher makes its ListerWatcher at its first list or watch,
// which the informer's run makes, not when the informer is made. It stands
// for a REST client's, which supports WatchList semantics, so it does not
// say otherwise (watchlist.DoesClientNotSupportWatchListSemantics).
type lazyListerWatcher struct {
	make func() cache.ListerWatcher
	once sync.Once
	lw   cache.ListerWatcherWithContext
}

func (l *lazyListerWatcher) get() cache.ListerWatcherWithContext {
	l.once.Do(func() { l.lw = cache.ToListerWatcherWithContext(l.make()) })
	return l.lw
}

func (l *lazyListerWatcher) List(options metav1.ListOptions) (runtime.Object, error) {
	return l.get().ListWithContext(context.Background(), options)
}

func (l *lazyListerWatcher) Watch(options metav1.ListOptions) (watch.Interface, error) {
	return l.get().WatchWithContext(context.Background(), options)
}

func (l *lazyListerWatcher) ListWithContext(ctx context.Context, options metav1.ListOptions) (runtime.Object, error) {
	return l.get().ListWithContext(ctx, options)
}

func (l *lazyListerWatcher) WatchWithContext(ctx context.Context, options metav1.ListOptions) (watch.Interface, error) {
	return l.get().WatchWithContext(ctx, options)
}

// unstructuredRESTClientFor returns the shared unstructured REST client of
// gv.
func (f *Factory) unstructuredRESTClientFor(gv schema.GroupVersion) (rest.Interface, error) {
	protobuf := f.protobufForUnstructured(gv)
	f.mu.Lock()
	defer f.mu.Unlock()
	key := restClientKey{gv: gv, protobuf: protobuf, unstructured: true}
	if client, ok := f.restClients[key]; ok {
		return client, nil
	}
	client, err := newRESTClientWith(f.clients, newUnstructuredSerializer(f.codecs, f.interner), gv, protobuf)
	if err != nil {
		return nil, err
	}
	f.restClients[key] = client
	return client, nil
}

// protobufForUnstructured reports whether UnstructuredFor's informers of
// gv may ask for protobuf, and so hold exactly the fields of the scheme's
// Go types: only if neither Clients.Dynamic nor Clients.UnstructuredFromJSON
// is set, the scheme has a kind of gv (with its list) that decodes from
// protobuf, and the server is no newer than the k8s.io/api this program is
// built with (serverNoNewerThanAPI), so that it serves no field those types
// lack. The first call that gets that far asks the server's version, once
// per Factory.
func (f *Factory) protobufForUnstructured(gv schema.GroupVersion) bool {
	if f.clients.Dynamic != nil || f.clients.UnstructuredFromJSON || !schemeDecodesProtobuf(f.scheme, gv) {
		return false
	}
	f.serverCheck.Do(func() {
		f.serverNoNewer = serverNoNewerThanAPI(f.clients)
	})
	return f.serverNoNewer
}

// schemeDecodesProtobuf reports whether scheme has a kind of gv, and its
// list kind, whose Go type decodes from protobuf: a built-in kind. The
// option and event types every GroupVersion registers have no list kind.
func schemeDecodesProtobuf(scheme *runtime.Scheme, gv schema.GroupVersion) bool {
	for kind, typ := range scheme.KnownTypes(gv) {
		if scheme.Recognizes(gv.WithKind(kind+"List")) && supportsProtobuf(reflect.PointerTo(typ)) {
			return true
		}
	}
	return false
}

// serverNoNewerThanAPI reports whether the server's minor version is at
// most that of the k8s.io/api module this program is built with (v0.37.x
// for Kubernetes 1.37): a newer server may serve fields the Go types lack,
// which a protobuf decode would drop. Anything it cannot tell (a version it
// cannot read, a failed request) is false.
func serverNoNewerThanAPI(clients Clients) bool {
	if clients.Config == nil {
		return false
	}
	disco, err := discovery.NewDiscoveryClientForConfigAndClient(clients.Config, withTimeout(clients.HTTPClient, clients.Config.Timeout))
	if err != nil {
		return false
	}
	info, err := disco.ServerVersion()
	if err != nil {
		return false
	}
	serverMinor, ok := serverMinorVersion(info)
	return ok && serverMinor <= apiModuleMinor()
}

// requiredAPIMinor is the minor version of the k8s.io/api this module's
// go.mod requires (v0.37.2): the lowest any program that imports it can be
// built with, since Go's module selection only ever picks a newer one
// (TestRequiredAPIMinorMatchesGoMod keeps the two in step).
const requiredAPIMinor = 38

// apiModuleMinor is the minor version of the k8s.io/api module in the
// build (37 for v0.37.2): from the build information where it lists the
// module (binaries built by go build or go run), else requiredAPIMinor,
// which is never more (test binaries list no modules).
func apiModuleMinor() int {
	build, ok := debug.ReadBuildInfo()
	if !ok {
		return requiredAPIMinor
	}
	for _, dep := range build.Deps {
		if dep.Path != "k8s.io/api" {
			continue
		}
		if dep.Replace != nil {
			dep = dep.Replace
		}
		if minor, ok := moduleMinor(dep.Version); ok {
			return max(minor, requiredAPIMinor)
		}
	}
	return requiredAPIMinor
}

// moduleMinor reads the minor version of a k8s.io module version
// ("v0.37.2").
func moduleMinor(version string) (int, bool) {
	parts := strings.SplitN(strings.TrimPrefix(version, "v"), ".", 3)
	if len(parts) < 2 || parts[0] != "0" {
		return 0, false
	}
	minor, err := strconv.Atoi(parts[1])
	return minor, err == nil
}

// serverMinorVersion reads a Kubernetes server's minor version ("37", or
// "37+" as some providers write it) from major version 1.
func serverMinorVersion(info *version.Info) (int, bool) {
	if info == nil || info.Major != "1" {
		return 0, false
	}
	minor, err := strconv.Atoi(strings.TrimSuffix(info.Minor, "+"))
	return minor, err == nil
}

// newRESTClientWith returns a REST client for one GroupVersion that decodes
// with negotiated, asking for protobuf first if protobuf is set.
func newRESTClientWith(clients Clients, negotiated runtime.NegotiatedSerializer, gv schema.GroupVersion, protobuf bool) (rest.Interface, error) {
	config := rest.CopyConfig(clients.Config)
	config.GroupVersion = &gv
	config.APIPath = "/apis"
	if gv.Group == "" {
		config.APIPath = "/api"
	}
	config.NegotiatedSerializer = negotiated
	config.ContentType = contentTypeJSON
	config.AcceptContentTypes = contentTypeJSON
	if protobuf {
		config.ContentType = contentTypeProtobuf
		config.AcceptContentTypes = contentTypeProtobuf + "," + contentTypeJSON
	}
	if config.UserAgent == "" {
		config.UserAgent = rest.DefaultKubernetesUserAgent()
	}
	client, err := rest.RESTClientForConfigAndClient(config, clients.HTTPClient)
	if err != nil {
		return nil, fmt.Errorf("typed: REST client for %s: %w", gv, err)
	}
	return client, nil
}
