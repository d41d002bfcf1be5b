package ctrlcache

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
)

// Read your writes
//
// controller-runtime's consistent client
// (client.CacheOptions.EnableReadYourWritesConsistency) registers a
// handler of its own on the cache's informer of each kind it writes, and
// makes a Get or List wait until that handler has been called with an
// object at the resourceVersion of the client's last write to the key
// (Get) or to the kind (List), or a later one. The server sends an
// informer no event of a write outside its selection (a label or field
// selector, a namespace, a shard), so such a write's wait would end only
// with an event of another object of the selection, which on a quiet
// selection never comes: the read waits until its context ends.
//
// The informer's store knows more than its handlers: its resourceVersion
// (client-go's LastStoreSyncResourceVersion: that of the last add, update,
// delete, relist or watch bookmark it applied) moves with the watch
// bookmarks kube-apiserver sends about once a minute, and with every
// event the client-side shard filter leaves out; a store at N has applied
// every event of the selection up to N. progress tells controller-runtime's
// consistency handler, and no other handler, of that resourceVersion as it
// moves, so that a read's wait for a write outside the selection ends at
// the next bookmark (or filtered event) instead of never. It tells it by
// calling the handler's OnUpdate with an object that holds nothing but that
// resourceVersion: controller-runtime v0.25.3's handler reads nothing else
// of an update (consistencyhandler.OnUpdate records its newObj's
// resourceVersion as observed, and does nothing more). That is why
// progress recognises the handler by its type, and only that type:
// TestConsistencyHandlerIsRecognised fails if controller-runtime renames
// it, and e2e/ctrlcache's TestReadYourWritesOutsideSelection if it no
// longer ends the read. Every other handler sees only the informer's
// events.
//
// A read is never older than the write it waited for: the resourceVersion
// told is the store's, read after the store applied it, and the read that
// follows reads that store or a later state of it.

// consistencyHandlerPkgPath and consistencyHandlerName name the type of
// controller-runtime's read-your-writes handler (v0.25.3).
const (
	consistencyHandlerPkgPath = "sigs.k8s.io/controller-runtime/pkg/client/internal/consistencyhandler"
	consistencyHandlerName    = "ConsistencyHandler"
)

// progressInterval is how often progress reads the stores of the informers
// a consistency handler is registered on: what it adds to a wait that ends
// at a bookmark, which kube-apiserver sends once a minute.
const progressInterval = 100 * time.Millisecond

// isConsistencyHandler reports whether handler is controller-runtime's
// read-your-writes handler, a *consistencyhandler.ConsistencyHandler.
func isConsistencyHandler(handler toolscache.ResourceEventHandler) bool {
	t := reflect.TypeOf(handler)
	if t == nil || t.Kind() != reflect.Pointer {
		return false
	}
	return t.Elem().PkgPath() == consistencyHandlerPkgPath && t.Elem().Name() == consistencyHandlerName
}

// progressMarker is what a consistency handler is told the store's
// resourceVersion rv in: an object of no kind and no name, at rv.
func progressMarker(rv string) *metav1.PartialObjectMetadata {
	return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{ResourceVersion: rv}}
}

// progress is the consistency handlers of one cache, each fed its
// informer's store resourceVersion while the cache runs (run). Safe for
// concurrent use.
type progress struct {
	mu    sync.Mutex
	feeds map[*progressRegistration]struct{}
}

func newProgress() *progress {
	return &progress{feeds: map[*progressRegistration]struct{}{}}
}

// progressRegistration is the registration of a consistency handler fed
// by progress: the registration the informer returned, which it wraps, and
// the handler's feed.
type progressRegistration struct {
	toolscache.ResourceEventHandlerRegistration
	progress *progress
	handler  toolscache.ResourceEventHandler
	// applied returns the resourceVersion the informer's store (or, of a
	// cache of several namespaces, each of their stores) has applied, ""
	// if none yet or not comparable.
	applied func() string
	// gone reports whether the informer is gone for good (released by
	// RemoveInformer), never to move again.
	gone func() bool
	// last is the resourceVersion last told; only run reads and writes it.
	last string
}

// add registers reg's handler for feeding, and returns reg.
func (p *progress) add(reg *progressRegistration) *progressRegistration {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.feeds[reg] = struct{}{}
	return reg
}

// remove stops feeding reg's handler.
func (p *progress) remove(reg *progressRegistration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.feeds, reg)
}

// run tells each fed handler of its informer's store resourceVersion,
// every progressInterval, when it has moved, until ctx ends.
func (p *progress) run(ctx context.Context) {
	ticker := time.NewTicker(progressInterval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
		for _, reg := range p.registrations() {
			if reg.gone() {
				p.remove(reg)
				continue
			}
			reg.feed()
		}
	}
}

func (p *progress) registrations() []*progressRegistration {
	p.mu.Lock()
	defer p.mu.Unlock()
	regs := make([]*progressRegistration, 0, len(p.feeds))
	for reg := range p.feeds {
		regs = append(regs, reg)
	}
	return regs
}

// feed tells the handler of the store's resourceVersion if it has moved.
func (reg *progressRegistration) feed() {
	rv := reg.applied()
	if rv == "" || rv == reg.last {
		return
	}
	reg.last = rv
	marker := progressMarker(rv)
	reg.handler.OnUpdate(marker, marker)
}

// unfed stops feeding the handler of registration, if it is fed, and
// returns the registration its informer returned.
func unfed(registration toolscache.ResourceEventHandlerRegistration) toolscache.ResourceEventHandlerRegistration {
	reg, ok := registration.(*progressRegistration)
	if !ok {
		return registration
	}
	reg.progress.remove(reg)
	return reg.ResourceEventHandlerRegistration
}

// feedAcross adds controller-runtime's consistency handler to the informer
// of each namespace of a cache of several (multiNamespaceInformer), and
// feeds it the oldest resourceVersion their stores have applied: one the
// store of every namespace has reached. (Their events reach the one
// handler from each namespace, in no order across them: controller-runtime
// says its consistent client does not work correctly over several
// namespaces. Told the newest resourceVersion of the stores, it would be
// wrong more often.) The informers are ctrlcache's; register returns the
// registration of the whole.
func feedAcross(namespaceToInformer map[string]crcache.Informer, handler toolscache.ResourceEventHandler, options toolscache.HandlerOptions,
	register func(map[string]toolscache.ResourceEventHandlerRegistration) toolscache.ResourceEventHandlerRegistration,
) (toolscache.ResourceEventHandlerRegistration, error) {
	handles := make(map[string]toolscache.ResourceEventHandlerRegistration, len(namespaceToInformer))
	applied := make([]func() string, 0, len(namespaceToInformer))
	gone := make([]func() bool, 0, len(namespaceToInformer))
	var p *progress
	for ns, i := range namespaceToInformer {
		own, ok := i.(informer)
		if !ok {
			return nil, fmt.Errorf("ctrlcache: the informer of namespace %q is a %T, not ctrlcache's", ns, i)
		}
		registration, err := own.v.addEventHandler(handler, options)
		if err != nil {
			return nil, err
		}
		handles[ns] = registration
		applied = append(applied, own.applied)
		gone = append(gone, own.gone)
		p = own.progress
	}
	registration := register(handles)
	if p == nil {
		return registration, nil
	}
	return p.add(&progressRegistration{
		ResourceEventHandlerRegistration: registration,
		progress:                         p,
		handler:                          handler,
		applied:                          func() string { return oldestApplied(applied) },
		gone:                             func() bool { return slices.ContainsFunc(gone, func(g func() bool) bool { return g() }) },
	}), nil
}

// oldestApplied returns the oldest of the resourceVersions the stores of
// sources have applied: the one every store has reached; "" if one has
// none yet or one is not a decimal integer (kube-apiserver's are).
func oldestApplied(sources []func() string) string {
	var (
		oldest    uint64
		oldestStr string
	)
	for i, source := range sources {
		rv := source()
		n, err := strconv.ParseUint(rv, 10, 64)
		if err != nil {
			return ""
		}
		if i == 0 || n < oldest {
			oldest, oldestStr = n, rv
		}
	}
	return oldestStr
}
