package generictest

import (
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/generic-informers/generic/internal/shardcheck"
)

// watchSwitch holds the proxies of the informers' watches and can cut them.
type watchSwitch struct {
	// deletes gives delete events their delete's resource version.
	deletes *deleteStamps

	mu      sync.Mutex
	proxies map[*proxyWatch]struct{}
	paused  bool
	// changed is closed, and replaced, when a watch starts.
	changed chan struct{}
}

// watchKey names what a watch is of, and whose it is.
type watchKey struct {
	gvr       schema.GroupVersionResource
	namespace string
	// owner is the informer of the Fake's factory that opened the watch,
	// or nil for a watch opened by other code.
	owner *informerRequests
}

func (s *watchSwitch) add(key watchKey, inner watch.Interface, sel selection, present map[string]bool) *proxyWatch {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proxies == nil {
		s.proxies = map[*proxyWatch]struct{}{}
	}
	p := &proxyWatch{
		key: key, inner: inner, sel: sel, sw: s, paused: s.paused,
		out: make(chan watch.Event), stopped: make(chan struct{}), expire: make(chan struct{}),
		done: make(chan struct{}), present: present,
	}
	s.proxies[p] = struct{}{}
	s.notifyLocked()
	go p.loop()
	return p
}

// own marks p as the watch of owner, an informer of the Fake's factory.
func (s *watchSwitch) own(p *proxyWatch, owner *informerRequests) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p.key.owner = owner
	s.notifyLocked()
}

// notifyLocked wakes those waiting in missing.
func (s *watchSwitch) notifyLocked() {
	if s.changed != nil {
		close(s.changed)
		s.changed = nil
	}
}

// missing returns the keys of the informers that have no running watch,
// and a channel closed when a watch starts or is marked as an informer's.
func (s *watchSwitch) missing(keys []watchKey) ([]watchKey, <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	running := map[*informerRequests]bool{}
	for p := range s.proxies {
		running[p.key.owner] = true
	}
	var missing []watchKey
	for _, k := range keys {
		if !running[k.owner] {
			missing = append(missing, k)
		}
	}
	if len(missing) == 0 {
		return nil, nil
	}
	if s.changed == nil {
		s.changed = make(chan struct{})
	}
	return missing, s.changed
}

// describeWatches names watches in words, for a test's failure.
func describeWatches(keys []watchKey) string {
	names := make([]string, len(keys))
	for i, k := range keys {
		names[i] = k.String()
	}
	return strings.Join(names, ", ")
}

func (k watchKey) String() string {
	if k.owner == nil {
		return k.gvr.String() + " " + shardcheck.Request{Namespace: k.namespace}.String()
	}
	return k.gvr.String() + " " + k.owner.selection().String() + " (an informer's)"
}

// pause makes every watch drop its events until expire.
func (s *watchSwitch) pause() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.paused = true
	for p := range s.proxies {
		p.pause()
	}
}

// expire drops what the watches got while paused, ends each with 410 Gone
// (the reflectors relist) and lets new watches through.
func (s *watchSwitch) expire() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.paused = false
	for p := range s.proxies {
		close(p.expire)
		delete(s.proxies, p)
	}
}

// stopAll stops every watch and waits for their goroutines.
func (s *watchSwitch) stopAll() {
	s.mu.Lock()
	proxies := s.proxies
	s.proxies = nil
	s.mu.Unlock()
	for p := range proxies {
		p.Stop()
		<-p.done
	}
}

func (s *watchSwitch) remove(p *proxyWatch) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.proxies, p)
}

// proxyWatch forwards a fake client watch, with no bound on what it holds,
// filtering by label selector as the API server does (an object that stops
// matching is a DELETED event, one that starts matching an ADDED).
type proxyWatch struct {
	key      watchKey
	inner    watch.Interface
	sel      selection
	sw       *watchSwitch
	out      chan watch.Event
	stopped  chan struct{}
	expire   chan struct{}
	done     chan struct{}
	stopOnce sync.Once

	mu     sync.Mutex
	paused bool
	// present holds the keys of the objects the informer has as matching:
	// those of its list, then of the events the watch passed on.
	present map[string]bool
}

func (p *proxyWatch) ResultChan() <-chan watch.Event { return p.out }

func (p *proxyWatch) Stop() {
	p.stopOnce.Do(func() {
		close(p.stopped)
		p.inner.Stop()
	})
}

func (p *proxyWatch) pause() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.paused = true
}

func (p *proxyWatch) isPaused() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.paused
}

func (p *proxyWatch) loop() {
	defer close(p.done)
	defer close(p.out)
	defer p.sw.remove(p)
	var queue []watch.Event
	in := p.inner.ResultChan()
	expire := p.expire
	for {
		var send chan watch.Event
		var next watch.Event
		if len(queue) > 0 {
			send, next = p.out, queue[0]
		}
		select {
		case e, ok := <-in:
			if !ok {
				in = nil
				if len(queue) == 0 {
					return
				}
				continue
			}
			if !p.isPaused() {
				queue = append(queue, p.filter(e)...)
			}
		case send <- next:
			queue = queue[1:]
			if in == nil && len(queue) == 0 {
				return
			}
		case <-expire:
			expire = nil
			p.drop(in)
			queue = append(queue, watch.Event{Type: watch.Error, Object: &metav1.Status{
				Status: metav1.StatusFailure, Code: 410, Reason: metav1.StatusReasonExpired,
				Message: "generictest: the watch was cut",
			}})
			in = nil
			p.inner.Stop()
		case <-p.stopped:
			return
		}
	}
}

// drop discards what the inner watch holds: the events of a cut.
func (p *proxyWatch) drop(in <-chan watch.Event) {
	for {
		select {
		case _, ok := <-in:
			if !ok {
				return
			}
		default:
			return
		}
	}
}

// filter applies the request's selection to an event, as the API server does:
// an object modified out of the selector is DELETED, one modified into it
// ADDED, and events of objects that never matched are dropped.
func (p *proxyWatch) filter(e watch.Event) []watch.Event {
	if e.Type != watch.Added && e.Type != watch.Modified && e.Type != watch.Deleted {
		return []watch.Event{e}
	}
	if _, err := meta.Accessor(e.Object); err != nil {
		return []watch.Event{e}
	}
	if e.Type == watch.Deleted {
		e.Object = p.sw.deletes.restamped(p.key.gvr, e.Object)
	}
	key, _ := cache.MetaNamespaceKeyFunc(e.Object)
	matches := p.sel.served(e.Object)
	was := p.present[key]
	switch {
	case e.Type == watch.Deleted:
		delete(p.present, key)
		if !was {
			return nil
		}
	case matches:
		p.present[key] = true
		if !was {
			e.Type = watch.Added
		}
	case was:
		delete(p.present, key)
		e.Type = watch.Deleted
	default:
		return nil
	}
	return []watch.Event{e}
}
