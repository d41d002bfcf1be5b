package generictest

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/meta/testrestmapper"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	kubefake "k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/internal/fixtures"
	"github.com/generic-informers/generic/typed"
)

// Fake is a fake cluster for one test: client-go's fake dynamic client,
// seeded and as strict about writes as an API server, with a RESTMapper
// for the scheme's kinds and the custom resources of the fixtures, the
// real factories over it (Factory), and a REST front over it (Config).
type Fake struct {
	t      testing.TB
	scheme *runtime.Scheme
	mapper meta.RESTMapper
	client *dynamicfake.FakeDynamicClient
	// listKinds are the resources the fake client can list: the scheme's
	// kinds and the fixtures' custom resources.
	listKinds map[schema.GroupVersionResource]string
	// statusSubresource holds the resources with a status subresource.
	statusSubresource map[schema.GroupVersionResource]bool
	settings          settings
	// store is the fake client's tracker, strict as an API server and
	// stamping what it stores with resourceVersion: the fake client keeps
	// none in the objects themselves. Every write goes through it; reads
	// go to the tracker.
	store *stampingTracker
	// writes holds the last write of each object, for Settle.
	writes *writeLog
	// front serves the store over HTTP, in process (Config).
	front           *restFront
	resourceVersion atomic.Int64
	seen            *seenLog
	watches         *watchSwitch
	errs            errorLog
	// unsettled is set inside WithoutWatch, whose changes cannot be seen
	// until it ends.
	unsettled bool
	// listed remembers, of each list served, the objects that matched.
	listedMu sync.Mutex
	listed   map[listedKey]map[string]bool

	// making is the informer being made: the Fake makes one at a time
	// (makingMu), and learns of each what its requests select.
	makingMu  sync.Mutex
	making    atomic.Pointer[informerRequests]
	informers map[cache.SharedIndexInformer]*informerRequests

	mu        sync.Mutex
	factory   *typed.Factory
	clientset *kubefake.Clientset
}

// firstResourceVersion is the first resourceVersion the Fake stamps; it is
// far above the fake client's own per-resource counters, so that a watch
// resumed from one of the Fake's versions replays nothing.
const firstResourceVersion = 1_000_000

// New returns a Fake seeded as opts say, for the kinds scheme registers and
// the custom resources of the fixtures. Its informers are shut down when
// the test ends. Bad fixtures fail the test.
func New(t testing.TB, scheme *runtime.Scheme, opts ...Option) *Fake {
	t.Helper()
	if scheme == nil {
		t.Fatal("generictest: nil scheme")
	}
	f := &Fake{t: t, scheme: scheme, watches: &watchSwitch{deletes: &deleteStamps{}}, listed: map[listedKey]map[string]bool{},
		informers: map[cache.SharedIndexInformer]*informerRequests{}}
	f.resourceVersion.Store(firstResourceVersion)
	f.seen = newSeenLog(&f.resourceVersion)
	f.errs.onRecord = f.seen.recordError
	for _, opt := range opts {
		if opt != nil {
			opt(&f.settings)
		}
	}
	if f.settings.timeout == 0 {
		f.settings.timeout = DefaultTimeout
	}
	objs, err := f.seedObjects()
	if err != nil {
		t.Fatalf("generictest: %v", err)
	}
	crds := customResources(objs)
	// The fixtures' CRDs come first: they know the real plural and scope.
	f.mapper = meta.FirstHitRESTMapper{MultiRESTMapper: meta.MultiRESTMapper{crds.mapper(), testrestmapper.TestOnlyStaticRESTMapper(scheme)}}
	f.listKinds = f.resourceListKinds(crds)
	f.statusSubresource = f.statusSubresources(crds)
	f.client = dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), f.listKinds)
	// Through the tracker, so that an object it refuses (a duplicate, a bad
	// apiVersion) fails the test instead of panicking in the fake client.
	// Seeded objects are as created: at generation 1 unless they say.
	for _, obj := range objs {
		if _, err := schema.ParseGroupVersion(obj.GetAPIVersion()); err != nil {
			t.Fatalf("generictest: %s %s/%s: apiVersion: %v", obj.GetKind(), obj.GetNamespace(), obj.GetName(), err)
		}
		if obj.GetGeneration() == 0 {
			obj.SetGeneration(1)
		}
		obj.SetResourceVersion(f.nextResourceVersion())
		if err := f.client.Tracker().Add(obj); err != nil {
			t.Fatalf("generictest: seeding %s %s/%s: %v", obj.GetKind(), obj.GetNamespace(), obj.GetName(), err)
		}
	}
	// Reactors run last prepended first: watches and lists, then collection
	// deletes, patches and updates (which name their subresource), then
	// every other verb, all writes through the strict, stamping tracker.
	f.writes = newWriteLog(f.seen.rejectedCount)
	f.store = &stampingTracker{ObjectTracker: f.client.Tracker(), next: f.nextResourceVersion, deletes: f.watches.deletes,
		statusSubresource: func(gvr schema.GroupVersionResource) bool { return f.statusSubresource[gvr] },
		goType:            f.goTypeOf, writes: f.writes}
	f.client.PrependReactor("*", "*", clienttesting.ObjectReaction(f.store))
	f.client.PrependReactor("update", "*", f.updateReaction)
	f.client.PrependReactor("patch", "*", f.patchReaction)
	f.client.PrependReactor("delete-collection", "*", f.deleteCollection)
	f.client.PrependReactor("list", "*", f.list)
	f.client.PrependWatchReactor("*", f.watch)
	f.front = newRESTFront(f)
	t.Cleanup(f.shutdown)
	return f
}

// Dynamic returns the fake dynamic client, for the code under test. Its
// writes are checked and stamped as an API server's (see the package
// documentation: resourceVersion conflicts, generation, the status
// subresource); strategic merge patches and applies work on built-in
// kinds. Writes made straight to its Tracker are neither checked nor
// stamped, and Settle does not know of them.
func (f *Fake) Dynamic() *dynamicfake.FakeDynamicClient { return f.client }

// RESTMapper returns the Fake's RESTMapper.
func (f *Fake) RESTMapper() meta.RESTMapper { return f.mapper }

// Errors returns what the Fake's informers reported so far (see
// generic.ErrorHandler), such as a *generic.ConversionError for each object
// a typed informer skipped.
func (f *Fake) Errors() []error { return f.errs.all() }

func (f *Fake) nextResourceVersion() string {
	return strconv.FormatInt(f.resourceVersion.Add(1), 10)
}

// seedObjects reads the files and converts the objects to unstructured.
func (f *Fake) seedObjects() ([]*unstructured.Unstructured, error) {
	objs, err := fixtures.Load(f.settings.files...)
	if err != nil {
		return nil, err
	}
	// As an API server has them, and serves them: whole numbers are
	// int64, never float64.
	for _, obj := range objs {
		if obj.Object, err = jsonNumbers(obj.Object); err != nil {
			return nil, fmt.Errorf("%s %s: %w", obj.GetKind(), keyOf(obj), err)
		}
	}
	for _, obj := range f.settings.objects {
		u, err := f.toUnstructured(obj)
		if err != nil {
			return nil, err
		}
		objs = append(objs, u)
	}
	return objs, nil
}

// toUnstructured returns a copy of obj as unstructured, with its kind.
func (f *Fake) toUnstructured(obj runtime.Object) (*unstructured.Unstructured, error) {
	return toUnstructuredIn(f.scheme, obj)
}

// toUnstructuredIn returns a copy of obj as unstructured, with its kind in
// scheme.
func toUnstructuredIn(scheme *runtime.Scheme, obj runtime.Object) (*unstructured.Unstructured, error) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		return u.DeepCopy(), nil
	}
	gvks, _, err := scheme.ObjectKinds(obj)
	if err != nil {
		return nil, err
	}
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{Object: content}
	u.SetGroupVersionKind(gvks[0])
	return u, nil
}

// mappingFor returns the resource of obj.
func (f *Fake) mappingFor(obj *unstructured.Unstructured) (*meta.RESTMapping, error) {
	gvk := obj.GroupVersionKind()
	mapping, err := f.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return nil, fmt.Errorf("resource of %v: %w", gvk, err)
	}
	return mapping, nil
}

// listKinds tells the fake client the list kind of every resource it may
// be asked to list: the scheme's and the fixtures' custom resources.
func (f *Fake) resourceListKinds(crds *customResourceSet) map[schema.GroupVersionResource]string {
	kinds := map[schema.GroupVersionResource]string{}
	for gvk := range f.scheme.AllKnownTypes() {
		if gvk.Version == runtime.APIVersionInternal || !f.scheme.Recognizes(gvk.GroupVersion().WithKind(gvk.Kind+"List")) {
			continue
		}
		if mapping, err := f.mapper.RESTMapping(gvk.GroupKind(), gvk.Version); err == nil {
			kinds[mapping.Resource] = gvk.Kind + "List"
		}
	}
	for gvr, kind := range crds.listKinds {
		kinds[gvr] = kind
	}
	return kinds
}

// factoryOptions are the options of the Fake's factory.
func (f *Fake) factoryOptions() []generic.FactoryOption {
	// The fake clients serve no CustomResourceDefinitions (the fake
	// dynamic client panics on a resource it was not told of): no
	// ServedWatch; informers of kinds not served probe as usual.
	return append([]generic.FactoryOption{generic.WithErrorHandler(f.errs.record), generic.WithServedWatch(nil)}, f.settings.factory...)
}

// Factory returns the Fake's typed factory, the one NewInformer,
// NewUnstructuredInformer and NewMetadataInformer take their informers
// from, made on first use (with the Fake's FactoryOptions). Code under test
// may make its own informers from it, and write clients
// (typed.ClientFor): their requests go to the REST front of Config, so
// their writes are the Fake's, checked and stamped as the other clients'.
//
// Its informers are fed by the fake dynamic client (typed.Clients.Dynamic)
// and its metadata-only informers by an adapter of it
// (typed.Clients.Metadata); its RESTMapper is the Fake's
// (typed.Clients.RESTMapper), so it makes no discovery request.
//
// The Fake's changes wait only for the handlers registered through its own
// informers (NewInformer, NewUnstructuredInformer, NewMetadataInformer),
// not for those code under test registers on informers it takes from the
// factory. An informer the factory shares is the Fake's only if the Fake
// made it: take it through NewInformer (or the others) before code under
// test asks the factory for it, or NewInformer fails waiting for a watch
// it cannot tell from others. The factory is shut down when the test ends;
// do not shut it down before. It is safe for concurrent use.
func (f *Fake) Factory() *typed.Factory { return f.typedFactory() }

// typedFactory returns the Fake's factory, made on first use: typed
// informers, unstructured ones (typed.UnstructuredFor) and metadata-only
// ones (typed.MetadataFor) come from it.
func (f *Fake) typedFactory() *typed.Factory {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.factory == nil {
		client := &factoryClient{FakeDynamicClient: f.client, watches: f.watches, making: &f.making}
		clients := typed.Clients{
			Dynamic:    client,
			Metadata:   &metadataClient{dynamic: client},
			RESTMapper: f.mapper,
			Config:     f.Config(),
		}
		factory, err := typed.NewFactoryForClients(clients, f.scheme, f.factoryOptions()...)
		if err != nil {
			f.t.Fatalf("generictest: %v", err)
		}
		f.factory = factory
	}
	return f.factory
}

// makeInformer makes an informer with make and returns what the Fake
// learns of its requests: those of an informer made now, or of the one
// shared with an earlier call.
func (f *Fake) makeInformer(newOne func() (cache.SharedIndexInformer, error)) (*informerRequests, error) {
	f.makingMu.Lock()
	defer f.makingMu.Unlock()
	requests := &informerRequests{}
	f.making.Store(requests)
	defer f.making.Store(nil)
	shared, err := newOne()
	if err != nil {
		return nil, err
	}
	if known, ok := f.informers[shared]; ok {
		return known, nil
	}
	f.informers[shared] = requests
	return requests, nil
}

// shutdown stops the informers and their watches at the end of the test.
// A handler that never returns would hold it forever: it fails the test at
// the Fake's timeout instead.
func (f *Fake) shutdown() {
	f.t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f.stop()
	}()
	ctx, cancel, bound := f.deadline()
	defer cancel()
	select {
	case <-done:
	case <-ctx.Done():
		f.t.Fatalf("generictest: the informers did not shut down within %v: a handler has not returned", bound)
	}
}

func (f *Fake) stop() {
	f.mu.Lock()
	factory := f.factory
	f.mu.Unlock()
	if factory != nil {
		factory.Shutdown()
	}
	f.watches.stopAll()
}

// deadlineMargin is how long before the test's deadline waits give up, so
// that the test fails with their message rather than the test binary's
// panic.
const deadlineMargin = 5 * time.Second

// deadline bounds one wait: it ends after the Fake's timeout, or
// deadlineMargin before the test's deadline if that is sooner. It returns
// the bound too, for the wait's message.
func (f *Fake) deadline() (context.Context, context.CancelFunc, time.Duration) {
	bound := f.settings.timeout
	if tt, ok := f.t.(interface{ Deadline() (time.Time, bool) }); ok {
		if d, ok := tt.Deadline(); ok {
			bound = min(bound, max(time.Until(d)-deadlineMargin, 0))
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	return ctx, cancel, bound.Round(time.Millisecond)
}

// errorLog records what the informers report.
type errorLog struct {
	mu   sync.Mutex
	errs []error
	// onRecord is told of each error, for the seen log's conversion
	// errors.
	onRecord func(error)
}

func (l *errorLog) record(_ context.Context, err error) {
	l.mu.Lock()
	l.errs = append(l.errs, err)
	onRecord := l.onRecord
	l.mu.Unlock()
	if onRecord != nil {
		onRecord(err)
	}
}

func (l *errorLog) all() []error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]error(nil), l.errs...)
}

// sync starts a factory and waits for its informers, failing the test with
// the factory's reasons if they do not sync in time, then waits until they
// watch.
func (f *Fake) sync(start func(context.Context), wait func(context.Context) generic.SyncResult) {
	f.t.Helper()
	start(context.Background())
	ctx, cancel, bound := f.deadline()
	defer cancel()
	if err := wait(ctx).AsError(); err != nil {
		f.t.Fatalf("generictest: the informers did not sync within %v: %v", bound, err)
	}
	f.waitWatchingWithin(ctx, bound)
}

// waitWatching waits until every informer of the Fake watches. The fake
// client cannot replay a delete to a watch that starts after it, as an API
// server would from the list's resourceVersion: a change made between an
// informer's list and its watch could be lost.
func (f *Fake) waitWatching() {
	f.t.Helper()
	ctx, cancel, bound := f.deadline()
	defer cancel()
	f.waitWatchingWithin(ctx, bound)
}

// waitWatchingWithin is waitWatching within the bound of ctx.
func (f *Fake) waitWatchingWithin(ctx context.Context, bound time.Duration) {
	f.t.Helper()
	keys := f.seen.watchKeys()
	for {
		missing, changed := f.watches.missing(keys)
		if len(missing) == 0 {
			return
		}
		select {
		case <-changed:
		case <-ctx.Done():
			f.t.Fatalf("generictest: the informers did not start watching within %v; no watch of %s",
				bound, describeWatches(missing))
			return
		}
	}
}

// checkResource fails the test unless the fake client can list gvr: client-go's
// fake panics, in the informer's goroutine, on a resource it was not told of.
func (f *Fake) checkResource(gvr schema.GroupVersionResource) {
	f.t.Helper()
	if _, ok := f.listKinds[gvr]; !ok {
		f.t.Fatalf("generictest: %v is not a resource of the Fake's scheme or of its fixtures' CRDs", gvr)
	}
}
