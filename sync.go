package generic

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// SyncResult is what Registry.WaitForCacheSync found, shaped like
// client-go v0.38's cache.GVRSyncResult (Err and Synced are its fields),
// with each informer's own result besides.
type SyncResult struct {
	// Err is nil if every informer waited for synced; otherwise a
	// *SyncError naming each that did not and why, which wraps the
	// context's error if the wait ended with it (errors.Is(res.Err,
	// context.DeadlineExceeded)).
	Err error
	// Synced maps each resource with a started informer to whether all of
	// its informers synced, as cache.GVRSyncResult.Synced does.
	Synced map[schema.GroupVersionResource]bool
	// Informers holds one InformerSync per informer waited for, sorted by
	// resource, then Go type, namespace, selectors and shard: which
	// selection of a resource synced and which did not.
	Informers []InformerSync
}

// AsError returns Err: nil if every informer synced, as
// cache.GVRSyncResult.AsError does.
func (r SyncResult) AsError() error { return r.Err }

// InformerSync is one informer's part of a SyncResult.
type InformerSync struct {
	// Selection says which informer it is: its resource and selection.
	Selection Selection
	// Synced says whether its cache was filled.
	Synced bool
	// Status is its Status when the wait ended.
	Status Status
}

// Selection names one informer of a Registry: what it lists and watches.
type Selection struct {
	// GVR is its resource; Type the Go type of its objects, as %T writes
	// it ("*v1.Pod", "*unstructured.Unstructured").
	GVR  schema.GroupVersionResource
	Type string
	// Namespace, LabelSelector and FieldSelector are its namespace ("":
	// all) and selectors, as its Options (and WithTweakListOptions) give
	// them, in the one form WithLabelSelector and WithFieldSelector say.
	Namespace, LabelSelector, FieldSelector string
	// Shard is the shard given to it alone (WithShard on Acquire), as
	// Shard.String writes it; "" when it follows the Registry's.
	Shard string
}

// WaitForCacheSync waits until every started informer has synced or ctx
// ends, and reports each (SyncResult). Err is nil if all synced, else a
// *SyncError naming each informer that did not and why: its Status
// (NotServed, Forbidden, still Syncing at the deadline, Stopped) and last
// error. If ctx ended, the *SyncError wraps ctx's error; if the informers
// stopped first (Release, RemoveResource, Shutdown, WithStopWhenNotServed),
// its Err is nil. It returns as soon as ctx ends (it does not poll), and
// also stops waiting for an informer that has stopped. Informers not yet
// started are not waited for. A nil ctx is context.Background().
//
// An informer that is Forbidden or NotServed keeps trying, so give ctx a
// deadline: with context.Background() this waits until it syncs.
//
// With WithMembership, it first waits until the replica has joined and
// its informers hold its shard; if ctx ends first, or the membership
// ends, Err says so and no informer is reported.
func (r *Registry) WaitForCacheSync(ctx context.Context) SyncResult {
	if ctx == nil {
		ctx = context.Background()
	}
	result := SyncResult{Synced: map[schema.GroupVersionResource]bool{}}
	if r.member != nil {
		if err := r.member.waitToJoin(ctx); err != nil {
			result.Err = err
			return result
		}
	}
	var unsynced []Status
	for _, e := range r.informers.Started() {
		synced := e.Runner.waitForSync(ctx)
		status := e.Runner.Status()
		result.Informers = append(result.Informers, InformerSync{Selection: e.Key.selection(e.Runner), Synced: synced, Status: status})
		if all, seen := result.Synced[e.Key.gvr]; !seen || all {
			result.Synced[e.Key.gvr] = synced
		}
		if !synced {
			unsynced = append(unsynced, status)
		}
	}
	slices.SortFunc(result.Informers, func(a, b InformerSync) int { return a.Selection.compare(b.Selection) })
	if len(unsynced) > 0 {
		result.Err = newSyncError(unsynced, ctx.Err())
	}
	return result
}

// selection is the Selection the key names, of runner's Go type.
func (k informerKey) selection(r runner) Selection {
	return Selection{GVR: k.gvr, Type: r.objectType(), Namespace: k.namespace, LabelSelector: k.labelSelector, FieldSelector: k.fieldSelector, Shard: k.ownShard}
}

// text writes the selection as "<gvr> of <type>" followed by its
// namespace, selectors and own shard, those that are set.
func (s Selection) text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s of %s", s.GVR, s.Type)
	for _, part := range []struct{ name, value string }{
		{"namespace", s.Namespace}, {"labels", s.LabelSelector}, {"fields", s.FieldSelector}, {"shard", s.Shard},
	} {
		if part.value != "" {
			fmt.Fprintf(&b, ", %s %q", part.name, part.value)
		}
	}
	return b.String()
}

func (s Selection) compare(o Selection) int {
	return cmp.Or(cmp.Compare(s.GVR.String(), o.GVR.String()), cmp.Compare(s.Type, o.Type),
		cmp.Compare(s.Namespace, o.Namespace), cmp.Compare(s.LabelSelector, o.LabelSelector),
		cmp.Compare(s.FieldSelector, o.FieldSelector), cmp.Compare(s.Shard, o.Shard))
}
