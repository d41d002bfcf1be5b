package typed

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	clientmetadata "k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/internal/share"
)

// Factory is the one factory for every kind of informer a controller
// needs: typed informers for any Go type registered in its scheme
// (InformerFor, InformerForKind), *unstructured.Unstructured informers of
// any resource (UnstructuredFor) and metadata-only ones (MetadataFor). It
// shares one informer per kind of object and GroupVersionResource, and
// starts, syncs and stops them all as a unit: one Start, one
// WaitForCacheSync, one Statuses, one Shutdown. A Factory is safe for
// concurrent use.
//
// Under it, each Go type T has a generic.Factory[T]; the Options given to
// NewFactory apply to all of them, and they share one shard.
type Factory struct {
	scheme  *runtime.Scheme
	codecs  serializer.CodecFactory
	clients Clients
	kinds   kindMapper // nil: no RESTMapper and no Config
	opts    []generic.Option

	mu sync.Mutex
	// byType holds the *generic.Factory[T] of each Go type T, and of each
	// kind served as Object, as a lifecycle.
	byType map[factoryKey]lifecycle
	// restClients holds one REST client per GroupVersion and wire format.
	restClients map[restClientKey]rest.Interface
	// scopes records, for every resource handed out, whether it is
	// cluster-scoped.
	scopes map[schema.GroupVersionResource]meta.RESTScopeName
	// metadata is the client made from Config for MetadataFor, on first
	// use.
	metadata clientmetadata.Interface
	// serverCheck asks the server's version once, for
	// protobufForUnstructured; serverNoNewer is its answer.
	serverCheck   sync.Once
	serverNoNewer bool
	// interner is shared by the decoders of UnstructuredFor's informers.
	interner *share.Interner
	// sharer is shared by the decoders of the typed informers (their REST
	// clients': restClientFor).
	sharer *share.Sharer
	// startCtx is the context of the last Start, under which the
	// generic.Factory of a kind asked for later starts.
	startCtx     context.Context
	shuttingDown bool
	// unserved records the kinds handed out before the server served them
	// (unserved_kind.go).
	unserved unservedKinds
	// shard is the shard of every generic.Factory[T], and widened the one a
	// reshard under way widens it to (nil if none): a generic.Factory[T]
	// made later starts where the others are.
	shard   generic.Shard
	widened *generic.Shard
	// options is a factory of no informers, made to check the Options:
	// with generic.WithMembership, it shares the membership of every
	// generic.Factory[T], and answers Shard and Membership for them.
	options *generic.Factory[*metav1.PartialObjectMetadata]
	member  bool
}

// lifecycle is what the Factory does with each generic.Factory[T],
// whatever T.
type lifecycle interface {
	Start(ctx context.Context)
	WaitForCacheSync(ctx context.Context) error
	Statuses() map[schema.GroupVersionResource]generic.Status
	Shutdown()
	BeginReshard(ctx context.Context, next generic.Shard) error
	Reshard(ctx context.Context, next generic.Shard) error
}

// factoryKey names a generic.Factory of the Factory: the Go type T it
// serves, and for T = Object the kind.
type factoryKey struct {
	goType reflect.Type
	gvk    schema.GroupVersionKind
}

type restClientKey struct {
	gv       schema.GroupVersion
	protobuf bool
	// unstructured is set for the clients of UnstructuredFor, which decode
	// into *unstructured.Unstructured (unstructuredSerializer).
	unstructured bool
	// writes: a client for Client, which decodes single objects as they are.
	writes bool
}

// NewFactory returns a Factory that lists and watches through typed REST
// clients made from config, decoding with scheme's codecs into the Go types
// registered in scheme. The Options (generic.WithNamespace,
// generic.WithResyncPeriod, ...) apply to every informer.
//
// It fails on a nil config or scheme, a config that cannot make a client,
// or an invalid Option.
func NewFactory(config *rest.Config, scheme *runtime.Scheme, opts ...generic.Option) (*Factory, error) {
	if config == nil {
		return nil, errors.New("typed: nil rest.Config")
	}
	return NewFactoryForClients(Clients{Config: config}, scheme, opts...)
}

// NewFactoryForClients is NewFactory with the clients given, for a shared
// HTTP client, a RESTMapper of your own, or a (fake) dynamic client.
func NewFactoryForClients(clients Clients, scheme *runtime.Scheme, opts ...generic.Option) (*Factory, error) {
	if scheme == nil {
		return nil, errors.New("typed: nil scheme")
	}
	// The Options are checked, and their shard read, by a factory of no
	// informers, made for that alone: Options are opaque outside package
	// generic.
	checked, err := generic.NewFactory[*metav1.PartialObjectMetadata](nil, nil, opts...)
	if err != nil {
		return nil, err
	}
	shard, _ := checked.Shard()
	_, member := checked.Membership()
	resolved, kinds, err := clients.resolve()
	if err != nil {
		return nil, err
	}
	sharing := share.EqualTrees
	if resolved.NoSharing {
		sharing = share.StringsOnly
	}
	return &Factory{
		shard:       shard,
		options:     checked,
		member:      member,
		scheme:      scheme,
		interner:    share.NewInterner(sharing),
		sharer:      share.New(!resolved.NoSharing),
		codecs:      serializer.NewCodecFactory(scheme),
		clients:     resolved,
		kinds:       kinds,
		opts:        opts,
		byType:      map[factoryKey]lifecycle{},
		restClients: map[restClientKey]rest.Interface{},
		scopes:      map[schema.GroupVersionResource]meta.RESTScopeName{},
	}, nil
}

// Start runs every informer handed out and not running yet, until ctx ends
// or Shutdown is called. It does not block and may be called any number of
// times; informers requested after a Start run at once, under its context.
func (f *Factory) Start(ctx context.Context) {
	if ctx == nil {
		ctx = context.Background()
	}
	f.mu.Lock()
	f.startCtx = ctx
	f.mu.Unlock()
	for _, l := range f.lifecycles() {
		l.Start(ctx)
	}
}

// WaitForCacheSync waits until every started informer has synced or ctx
// ends; it returns nil, or a *generic.SyncError naming each resource that
// did not sync and why (see generic.Factory.WaitForCacheSync).
func (f *Factory) WaitForCacheSync(ctx context.Context) error {
	var unsynced []generic.Status
	var ctxErr error
	for _, l := range f.lifecycles() {
		var syncErr *generic.SyncError
		if err := l.WaitForCacheSync(ctx); errors.As(err, &syncErr) {
			unsynced = append(unsynced, syncErr.Unsynced...)
			ctxErr = syncErr.Err
		}
	}
	if len(unsynced) == 0 {
		return nil
	}
	slices.SortFunc(unsynced, func(a, b generic.Status) int { return strings.Compare(a.GVR.String(), b.GVR.String()) })
	return &generic.SyncError{Unsynced: unsynced, Err: ctxErr}
}

// Statuses reports the Status of every informer of the factory, keyed by
// resource. A resource with several informers (typed, unstructured and
// metadata-only ones, or several selections) reports one that is not
// Synced, if any, so that a problem is never hidden behind a synced twin.
func (f *Factory) Statuses() map[schema.GroupVersionResource]generic.Status {
	statuses := map[schema.GroupVersionResource]generic.Status{}
	for _, l := range f.lifecycles() {
		for gvr, status := range l.Statuses() {
			if seen, ok := statuses[gvr]; !ok || seen.State == generic.Synced {
				statuses[gvr] = status
			}
		}
	}
	return statuses
}

// Shutdown stops every informer and returns when all their goroutines have
// ended. After Shutdown, Start does nothing. It must not be called from a
// callback of the factory's informers, which it waits for; see
// generic.Factory.Shutdown, whose rule and report
// (generic.ErrShutdownWaitsOnCallback) are each kind's.
func (f *Factory) Shutdown() {
	f.mu.Lock()
	f.shuttingDown = true
	f.mu.Unlock()
	for _, l := range f.lifecycles() {
		l.Shutdown()
	}
}

// Scheme returns the scheme the factory was made with: the Go types it
// serves, and their GroupVersionKinds (scheme.ObjectKinds, scheme.New), so
// that code holding only the factory can build objects, owner references
// and apply configurations. It is the caller's scheme, not a copy: register
// nothing in it once the factory is in use.
func (f *Factory) Scheme() *runtime.Scheme { return f.scheme }

// Shard returns the factory's shard (see generic.WithShard), and the one a
// reshard under way widens it to (nil if none).
func (f *Factory) Shard() (current generic.Shard, next *generic.Shard) {
	if f.member {
		return f.options.Shard()
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.shard, f.widened
}

// BeginReshard is generic.Factory.BeginReshard for every kind of the
// factory: it returns once every informer it started holds the union of
// its shard and next.
//
// With generic.WithMembership, it returns generic.ErrMembershipReshards.
func (f *Factory) BeginReshard(ctx context.Context, next generic.Shard) error {
	if f.member {
		return generic.ErrMembershipReshards
	}
	f.mu.Lock()
	widened := next
	f.widened = &widened
	f.mu.Unlock()
	for _, l := range f.lifecycles() {
		if err := l.BeginReshard(ctx, next); err != nil {
			return err
		}
	}
	return nil
}

// Reshard is generic.Factory.Reshard for every kind of the factory: it
// returns once every informer it started holds shard next alone.
func (f *Factory) Reshard(ctx context.Context, next generic.Shard) error {
	if err := f.BeginReshard(ctx, next); err != nil {
		return err
	}
	f.mu.Lock()
	f.shard, f.widened = next, nil
	f.mu.Unlock()
	for _, l := range f.lifecycles() {
		if err := l.Reshard(ctx, next); err != nil {
			return err
		}
	}
	return nil
}

// Membership returns where the replica stands in the factory's membership
// (generic.WithMembership), and false without one.
func (f *Factory) Membership() (generic.MembershipStatus, bool) {
	return f.options.Membership()
}

func (f *Factory) lifecycles() []lifecycle {
	f.mu.Lock()
	defer f.mu.Unlock()
	all := make([]lifecycle, 0, len(f.byType))
	for _, l := range f.byType {
		all = append(all, l)
	}
	return all
}

// factoryFor returns the generic.Factory under key, making it on first use
// over source with convert, at the factory's shard; f.mu must be held.
func factoryFor[T generic.Object](f *Factory, key factoryKey, source generic.Source, convert generic.Converter[T]) (*generic.Factory[T], error) {
	if l, ok := f.byType[key]; ok {
		gf, ok := l.(*generic.Factory[T])
		if !ok {
			return nil, fmt.Errorf("typed: factory of %v holds a %T", key.goType, l)
		}
		return gf, nil
	}
	// The source is called from Acquire, not under f.mu: clusterScoped
	// locks it.
	source = f.unservedAware(ignoreNamespaceWhenClusterScoped(source, f.clusterScoped))
	opts := slices.Clip(f.opts)
	if !f.member {
		opts = append(opts, generic.WithShard(f.shard.Index, f.shard.Count))
	}
	gf, err := generic.NewFactory(source, convert, opts...)
	if err != nil {
		return nil, err // NewFactory checked the Options: it cannot happen
	}
	if f.widened != nil {
		// With no informers yet, this returns at once.
		if err := gf.BeginReshard(context.Background(), *f.widened); err != nil {
			return nil, err
		}
	}
	switch {
	case f.shuttingDown:
		gf.Shutdown()
	case f.startCtx != nil:
		// Started already: the informers of a new kind run at once, as
		// those of the kinds known at Start do.
		gf.Start(f.startCtx)
	}
	f.byType[key] = gf
	return gf, nil
}

// restClientFor returns the shared REST client of gv; f.mu must be held.
func (f *Factory) restClientFor(gv schema.GroupVersion, protobuf bool) (rest.Interface, error) {
	key := restClientKey{gv: gv, protobuf: protobuf}
	if client, ok := f.restClients[key]; ok {
		return client, nil
	}
	client, err := newRESTClient(f.clients, f.codecs, f.sharer, gv, protobuf)
	if err != nil {
		return nil, err
	}
	f.restClients[key] = client
	return client, nil
}

func (f *Factory) clusterScoped(gvr schema.GroupVersionResource) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.scopes[gvr] == meta.RESTScopeNameRoot
}
