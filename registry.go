package generic

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	"github.com/generic-informers/generic/internal/registry"
)

// Registry holds the shared informers of every kind a program uses
// (typed ones, *unstructured.Unstructured ones, metadata-only ones: one
// Factory view per kind, see NewFactoryOn) and owns their lifecycle once:
// Start, WaitForCacheSync, Statuses, Shutdown, the shard and its reshards
// (WithShard), the membership (WithMembership), and the removal of a
// resource (RemoveResource). typed.Factory is a Registry with views made
// on demand; NewFactory makes a Registry with one view.
//
// The zero Registry is not usable; call NewRegistry. A Registry is safe for
// concurrent use. Its informers' callbacks (event handlers, ErrorHandler,
// StateHandler) may call any of its methods but Shutdown, which waits for
// them (see Shutdown).
type Registry struct {
	// opts are the Registry-wide Options, which each informer's own (see
	// Factory.Acquire) follow and override; options is them resolved.
	opts    []FactoryOption
	options options
	// shard is the selection the informers of the registry's own shard
	// share, which Reshard moves (factory_shard.go), or the membership
	// (member, nil without WithMembership; factory_membership.go).
	shard  *shardState
	member *member
	// informers holds the informers, their holds and their runs
	// (internal/registry), keyed by view, resource and selection.
	informers *registry.Registry[informerKey, runner]
	// views numbers the Factory views made on the Registry.
	views atomic.Uint64
	// served tells the informers that wait for their resource when the
	// resources served may have changed, and runs the ServedWatch
	// (served_watch.go).
	served *servedChanges
	// shutdownReportAfter is shutdownReportAfter but in tests
	// (export_test.go).
	shutdownReportAfter time.Duration
}

// entry is one informer of a Registry and how it runs.
type entry = registry.Entry[informerKey, runner]

// runner is what a Registry does with an informer, whatever its T.
type runner interface {
	Run(ctx context.Context)
	Status() Status
	HasSynced() bool
	GroupVersionResource() schema.GroupVersionResource
	// stopped reports whether the informer has stopped or will make no
	// more requests.
	stopped() bool
	// waitForSync waits until the cache is filled, the informer stops, or
	// ctx ends, and reports whether the cache was filled.
	waitForSync(ctx context.Context) bool
	// waitForListed waits until the informer has listed selection
	// generation (or a later one) and its cache holds that list.
	waitForListed(ctx context.Context, generation uint64) error
	// callbacksRunning reports whether a StateHandler or ErrorHandler
	// call is running; reportShutdownBlocked tells the ErrorHandler that
	// Shutdown waits on it.
	callbacksRunning() bool
	reportShutdownBlocked(waited time.Duration)
	// objectType is the Go type of its objects, as %T writes it.
	objectType() string
}

var errNilRegistry = errors.New("generic: nil Registry")

// nilSource is the Source of a view given none: its informers' lists fail
// with a clear error, they never sync, and WaitForCacheSync says so when
// its context ends.
func nilSource(schema.GroupVersionResource, string, TweakListOptionsFunc) cache.ListerWatcher {
	return FailingListerWatcher(errors.New("generic: nil Source"))
}

// NewRegistry returns a Registry whose informers follow opts, the
// Registry-wide Options (each informer's own, given to Acquire, override
// them). An invalid Option (see each) is an error, and nothing is made.
// It talks to no server: its informers list and watch once started, a
// membership joins its group at Start.
func NewRegistry(opts ...FactoryOption) (*Registry, error) {
	// The namespace index comes first so that an indexer of the same name
	// given in opts replaces it.
	opts = append([]FactoryOption{WithIndexers(cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})}, opts...)
	o, err := resolveOptions(opts)
	if err != nil {
		return nil, err
	}
	r := &Registry{
		opts:      opts,
		options:   o,
		shard:     newShardState(o.shardOrAll()),
		member:    o.member,
		informers: registry.New[informerKey](func(ctx context.Context, i runner) { i.Run(ctx) }, runner.stopped, o.deferredStart),
		served:    newServedChanges(o.servedWatch),

		shutdownReportAfter: shutdownReportAfter,
	}
	if r.member != nil {
		r.shard = r.member.shard
	}
	return r, nil
}

// Statuses reports the Status of every informer of the Registry, started
// or not, keyed by resource. Of a resource with several informers (several
// selections, see Factory.Acquire, or several kinds: typed, unstructured
// and metadata-only), it reports one that is not Synced, if any, so that a
// problem is never hidden behind a synced twin.
func (r *Registry) Statuses() map[schema.GroupVersionResource]Status {
	statuses := map[schema.GroupVersionResource]Status{}
	for _, e := range r.informers.Entries() {
		if seen, ok := statuses[e.Key.gvr]; !ok || seen.State == Synced {
			statuses[e.Key.gvr] = e.Runner.Status()
		}
	}
	return statuses
}

// Start runs every informer that is not running yet, each in its own
// goroutine, until ctx ends or Shutdown is called, and runs informers asked
// for later at once under ctx (unless withDeferredStart). An informer that
// has stopped or is stopping (the context of an earlier Start ended, or it
// stopped for good) is replaced first by a fresh one, as Acquire replaces
// it, to which its holds carry over: the Handles taken before read the
// fresh one (see Handle). It does not block, may be called any number of
// times, and does nothing after Shutdown. A nil ctx is taken as
// context.Background(). Ending ctx stops the informers as client-go's
// factories' stop channel does; Release, RemoveResource and Shutdown are
// the ways to stop them and wait for their end.
//
// With WithMembership, Start joins the membership's group instead: the
// informers start once it gave the replica its shard, and run until the
// replica has left, cleanly once ctx ends (see Membership.LeaveTimeout).
func (r *Registry) Start(ctx context.Context) {
	if ctx == nil {
		ctx = context.Background()
	}
	r.served.start(ctx)
	if r.member != nil {
		r.member.start(ctx, r, r.options.metricsProvider)
		return
	}
	r.informers.Start(ctx)
}

// startInformers runs the informers not running yet under ctx.
func (r *Registry) startInformers(ctx context.Context) { r.informers.Start(ctx) }

// Shutdown stops every informer the Registry started, released and removed
// ones included, and returns when all their goroutines have ended: every
// Handle's Done is then closed. After Shutdown, Start does nothing. It may
// be called any number of times, also concurrently.
//
// Shutdown must not be called from a callback of the Registry's informers,
// as client-go's ShutDownEventHandler must not be called from the
// handler's own callbacks: it waits for the informers' goroutines, and an
// informer does not end until its callbacks have returned, the caller's
// among them, so such a call never returns. From a callback, cancel the
// context given to Start instead, which stops the informers without
// waiting, or Release, or RemoveResource; call Shutdown afterwards, outside
// the callbacks, to wait for them. Event handlers are client-go's, which
// cannot tell; of a StateHandler or ErrorHandler call that Shutdown has
// waited on for 5 seconds, the informer's ErrorHandler is told, once, with
// an error wrapping ErrShutdownWaitsOnCallback (called directly: the
// callbacks goroutine is the one that does not return), so that such a
// Shutdown does not hang in silence.
//
// Unlike client-go's factories, whose Shutdown only waits for the stop
// channel given to Start to close, Shutdown stops the informers itself.
// Informers run by hand (Informer().Run) run until their caller stops them.
//
// With WithMembership, Shutdown first leaves the group cleanly (see
// Membership.LeaveTimeout), the informers running until the replica has
// left.
func (r *Registry) Shutdown() {
	stopWatch := r.watchShutdown()
	defer stopWatch()
	if r.member != nil {
		r.member.stop()
	}
	r.informers.Shutdown()
	r.served.stop()
}

// RemoveResource stops every informer of gvr the Registry holds, of every
// view and selection, whatever their holds, as controller-runtime's
// cache.RemoveInformer does, and returns a channel closed once all their
// goroutines have ended. Their Handles' Done channels close with it, and
// their Release then does nothing. A later Acquire of gvr makes a fresh
// informer. It does not wait, so it may be called from a callback.
func (r *Registry) RemoveResource(gvr schema.GroupVersionResource) <-chan struct{} {
	return r.informers.RemoveWhere(func(key informerKey) bool { return key.gvr == gvr })
}

// Membership returns where the replica stands in the Registry's
// membership, and false without WithMembership.
func (r *Registry) Membership() (MembershipStatus, bool) {
	if r.member == nil {
		return MembershipStatus{}, false
	}
	return r.member.status(), true
}
