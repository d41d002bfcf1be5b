package generic_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	clientfeatures "k8s.io/client-go/features"
	clientfeaturestesting "k8s.io/client-go/features/testing"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/internal/shardcheck"
)

// rywPod is a Pod of namespace team-a at resourceVersion rv.
func rywPod(name, rv, uid string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
		Namespace: "team-a", Name: name, ResourceVersion: rv, UID: types.UID(uid),
	}}
}

// rywBookmark is a watch bookmark at rv, as the API server sends it.
func rywBookmark(rv string) watch.Event {
	return watch.Event{Type: watch.Bookmark, Object: &corev1.Pod{ObjectMeta: metav1.ObjectMeta{ResourceVersion: rv}}}
}

// rywInformer runs a Pod informer whose list holds web-0 (resourceVersion
// 3) and web-1 (resourceVersion 4) at resourceVersion 5, and returns it
// with its watch once it is synced and watching.
func rywInformer(t *testing.T) (generic.Informer[*corev1.Pod], *watch.RaceFreeFakeWatcher, func()) {
	t.Helper()
	list := &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "5"}}
	list.Items = []corev1.Pod{*rywPod("web-0", "3", "uid-web-0"), *rywPod("web-1", "4", "uid-web-1")}
	lw := newScriptedListerWatcher(list)
	informer := newInformer[*corev1.Pod](lw, podsGVR, nil)
	stop := runSynced(t, informer)
	return informer, lw.nextWatch(t), stop
}

// rywPlay sends events on w, in order.
func rywPlay(w *watch.RaceFreeFakeWatcher, events []watch.Event) {
	for _, e := range events {
		w.Action(e.Type, e.Object)
	}
}

// rywOutcome describes what a wait returned, for cmp.Diff: "nil", the
// sentinel or context error it wraps, or the *ResourceVersionError's
// resource versions.
func rywOutcome(err error) string {
	var rvErr *generic.ResourceVersionError
	switch {
	case err == nil:
		return "nil"
	case errors.As(err, &rvErr):
		return fmt.Sprintf("ResourceVersionError wanted=%q cached=%q", rvErr.Wanted, rvErr.Cached)
	case errors.Is(err, context.DeadlineExceeded):
		return "DeadlineExceeded"
	case errors.Is(err, generic.ErrInformerStopped):
		return "ErrInformerStopped"
	case errors.Is(err, generic.ErrResourceVersionNotTracked):
		return "ErrResourceVersionNotTracked"
	default:
		return "other: " + err.Error()
	}
}

// rywWaitAsync starts wait on a goroutine and returns its result's channel.
func rywWaitAsync(wait func() error) <-chan error {
	done := make(chan error, 1)
	go func() { done <- wait() }()
	return done
}

// rywResult returns what done delivers, failing the test if nothing comes
// before the test's deadline.
func rywResult(t *testing.T, done <-chan error) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-testDone(t):
		t.Fatal("the wait did not return")
		return nil
	}
}

// rywPending fails the test if done has delivered: the wait must still be
// waiting.
func rywPending(t *testing.T, done <-chan error, after string) {
	t.Helper()
	select {
	case err := <-done:
		t.Fatalf("the wait returned %v after %s; want it still waiting", err, after)
	case <-time.After(30 * time.Millisecond):
	}
}

func TestWaitForResourceVersion(t *testing.T) {
	tests := []struct {
		name string
		rv   string
		// before are played, and applied, before the wait starts; after,
		// once it waits.
		before, after []watch.Event
		timeout       time.Duration // of the wait's context; 0: the test's
		want          string
	}{
		{name: "cache at it already", rv: "5", want: "nil"},
		{name: "cache past it", rv: "2", want: "nil"},
		{name: "met by an update", rv: "12", after: []watch.Event{
			{Type: watch.Modified, Object: rywPod("web-0", "12", "uid-web-0")},
		}, want: "nil"},
		{name: "met by a create", rv: "12", after: []watch.Event{
			{Type: watch.Added, Object: rywPod("web-2", "12", "uid-web-2")},
		}, want: "nil"},
		{name: "met by a delete", rv: "12", after: []watch.Event{
			{Type: watch.Deleted, Object: rywPod("web-1", "12", "uid-web-1")},
		}, want: "nil"},
		{name: "met by a later event", rv: "12", after: []watch.Event{
			{Type: watch.Modified, Object: rywPod("web-0", "40", "uid-web-0")},
		}, want: "nil"},
		{name: "met by a bookmark after an event short of it", rv: "20", after: []watch.Event{
			{Type: watch.Modified, Object: rywPod("web-0", "8", "uid-web-0")},
			rywBookmark("21"),
		}, want: "nil"},
		{name: "met by a bookmark seen before", rv: "20", before: []watch.Event{rywBookmark("20")}, want: "nil"},
		{name: "ten times longer is later", rv: "99999", after: []watch.Event{rywBookmark("100000")}, want: "nil"},
		{name: "not met: ctx ends", rv: "100", timeout: 50 * time.Millisecond, after: []watch.Event{
			{Type: watch.Modified, Object: rywPod("web-0", "99", "uid-web-0")},
		}, want: "DeadlineExceeded"},
		{name: "not well formed: letters", rv: "abc", want: `ResourceVersionError wanted="abc" cached="5"`},
		{name: "not well formed: leading zero", rv: "012", want: `ResourceVersionError wanted="012" cached="5"`},
		{name: "not well formed: empty", rv: "", want: `ResourceVersionError wanted="" cached="5"`},
		{name: "not well formed: zero", rv: "0", want: `ResourceVersionError wanted="0" cached="5"`},
		{name: "cache at one not well formed", rv: "12", after: []watch.Event{rywBookmark("opaque-7")},
			want: `ResourceVersionError wanted="12" cached="opaque-7"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			informer, w, stop := rywInformer(t)
			defer stop()
			ctx, cancel := testContext(t)
			defer cancel()
			if len(tc.before) > 0 {
				rywPlay(w, tc.before)
				if err := informer.WaitForResourceVersion(ctx, tc.before[len(tc.before)-1].Object.(*corev1.Pod).ResourceVersion); err != nil {
					t.Fatal(err)
				}
			}
			waitCtx := ctx
			if tc.timeout > 0 {
				var cancel context.CancelFunc
				waitCtx, cancel = context.WithTimeout(ctx, tc.timeout)
				defer cancel()
			}
			done := rywWaitAsync(func() error { return informer.WaitForResourceVersion(waitCtx, tc.rv) })
			rywPlay(w, tc.after)
			if diff := cmp.Diff(tc.want, rywOutcome(rywResult(t, done))); diff != "" {
				t.Errorf("wait for %q (-want +got):\n%s", tc.rv, diff)
			}
		})
	}
}

// TestWaitForResourceVersionErrors: the errors name the resource, both
// resource versions and the State, and unwrap to what errors.Is and
// errors.As look for.
func TestWaitForResourceVersionErrors(t *testing.T) {
	informer, _, stop := rywInformer(t)
	defer stop()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	err := informer.WaitForResourceVersion(ctx, "100")
	want := `generic: wait for resource version "100" of /v1, Resource=pods: the cache is at resource version "5" (Synced): context deadline exceeded`
	if diff := cmp.Diff(want, fmt.Sprint(err)); diff != "" {
		t.Errorf("error when ctx ends (-want +got):\n%s", diff)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("errors.Is(%v, context.DeadlineExceeded) = false", err)
	}

	err = informer.WaitForResourceVersion(context.Background(), "v7")
	want = `generic: cannot order resource version "v7" (waited for) and "5" (cache of /v1, Resource=pods): resource version is not well formed: v7; resource versions of this server are not comparable`
	if diff := cmp.Diff(want, fmt.Sprint(err)); diff != "" {
		t.Errorf("error of a malformed resource version (-want +got):\n%s", diff)
	}

	//lint:ignore SA1012 a nil context is the bad input tested
	err = informer.WaitForResourceVersion(nil, "5") //nolint:staticcheck
	if err == nil {
		t.Error("WaitForResourceVersion(nil, ...) returned nil, want an error")
	}
}

// TestWaitForResourceVersionStopped: a wait on a stopped informer ends with
// ErrInformerStopped unless its cache reached the resource version before
// it stopped; so does a wait under way when the informer stops.
func TestWaitForResourceVersionStopped(t *testing.T) {
	informer, w, stop := rywInformer(t)
	rywPlay(w, []watch.Event{rywBookmark("9")})
	ctx, cancel := testContext(t)
	defer cancel()
	if err := informer.WaitForResourceVersion(ctx, "9"); err != nil {
		t.Fatal(err)
	}
	done := rywWaitAsync(func() error { return informer.WaitForResourceVersion(ctx, "10") })
	rywPending(t, done, "a bookmark short of it")
	stop()
	got := []string{rywOutcome(rywResult(t, done))}
	got = append(got,
		rywOutcome(informer.WaitForResourceVersion(ctx, "10")),
		rywOutcome(informer.WaitForResourceVersion(ctx, "9")),
		rywOutcome(informer.WaitForWrite(ctx, rywPod("web-0", "12", "uid-web-0"))),
		rywOutcome(informer.WaitForDelete(ctx, rywPod("web-1", "4", "uid-web-1"))),
	)
	want := []string{"ErrInformerStopped", "ErrInformerStopped", "nil", "ErrInformerStopped", "ErrInformerStopped"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("waits on a stopped informer (-want +got):\n%s", diff)
	}
}

// TestWaitForResourceVersionNotStarted: an informer that has not started
// is waited for until ctx ends.
func TestWaitForResourceVersionNotStarted(t *testing.T) {
	informer := newInformer[*corev1.Pod](newScriptedListerWatcher(), podsGVR, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	err := informer.WaitForResourceVersion(ctx, "1")
	want := `generic: wait for resource version "1" of /v1, Resource=pods: the cache is at resource version "" (NotStarted): context deadline exceeded`
	if diff := cmp.Diff(want, fmt.Sprint(err)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestWaitForResourceVersionUntracked: with client-go's AtomicFIFO off,
// the cache does not record its resource version, and a wait says so
// instead of waiting for ctx.
func TestWaitForResourceVersionUntracked(t *testing.T) {
	clientfeaturestesting.SetFeatureDuringTest(t, clientfeatures.AtomicFIFO, false)
	informer, _, stop := rywInformer(t)
	defer stop()
	ctx, cancel := testContext(t)
	defer cancel()
	got := []string{
		rywOutcome(informer.WaitForResourceVersion(ctx, "5")),
		rywOutcome(informer.WaitForWrite(ctx, rywPod("web-0", "3", "uid-web-0"))),
	}
	want := []string{"ErrResourceVersionNotTracked", "ErrResourceVersionNotTracked"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// rywCachedRV is the resourceVersion of the cached Pod team-a/name, or
// "NotFound".
func rywCachedRV(t *testing.T, informer generic.Informer[*corev1.Pod], name string) string {
	t.Helper()
	pod, err := informer.Lister().Namespace("team-a").Get(name)
	if apierrors.IsNotFound(err) {
		return "NotFound"
	}
	if err != nil {
		t.Fatal(err)
	}
	return pod.ResourceVersion
}

func TestWaitForWrite(t *testing.T) {
	tests := []struct {
		name    string
		written *corev1.Pod
		// short are played first: the wait must go on after them; then
		// after. The Lister's Get of written's name must then show
		// wantCached.
		short, after []watch.Event
		want         string
		wantCached   string
	}{
		{name: "update", written: rywPod("web-0", "12", "uid-web-0"),
			short: []watch.Event{{Type: watch.Modified, Object: rywPod("web-1", "10", "uid-web-1")}}, // another writer's
			after: []watch.Event{{Type: watch.Modified, Object: rywPod("web-0", "12", "uid-web-0")}},
			want:  "nil", wantCached: "12"},
		{name: "create", written: rywPod("web-2", "12", "uid-web-2"),
			after: []watch.Event{{Type: watch.Added, Object: rywPod("web-2", "12", "uid-web-2")}},
			want:  "nil", wantCached: "12"},
		{name: "updated again since", written: rywPod("web-0", "12", "uid-web-0"),
			after: []watch.Event{{Type: watch.Modified, Object: rywPod("web-0", "14", "uid-web-0")}},
			want:  "nil", wantCached: "14"},
		// The cache first reaches the write's resource version with the
		// delete: the update at 12 would let the wait return while the
		// delete is on its way (defect 4), and the cache may hold either.
		{name: "deleted since", written: rywPod("web-0", "12", "uid-web-0"),
			short: []watch.Event{{Type: watch.Modified, Object: rywPod("web-0", "11", "uid-web-0")}},
			after: []watch.Event{{Type: watch.Deleted, Object: rywPod("web-0", "13", "uid-web-0")}},
			want:  "nil", wantCached: "NotFound"},
		{name: "never cached (outside the selection): a bookmark past it", written: rywPod("web-9", "12", "uid-web-9"),
			short: []watch.Event{rywBookmark("11")},
			after: []watch.Event{rywBookmark("30")},
			want:  "nil", wantCached: "NotFound"},
		{name: "cached already", written: rywPod("web-1", "4", "uid-web-1"), want: "nil", wantCached: "4"},
		{name: "cached at an older resource version: an object of another resource",
			written:    rywPod("web-0", "4", "uid-web-0"),
			want:       `other: generic: WaitForWrite of /v1, Resource=pods "team-a/web-0": the cache has applied every event up to resource version "5" but holds the object at "3", older than "4": the object is not of this informer's resource`,
			wantCached: "3"},
		{name: "no resourceVersion", written: rywPod("web-0", "", "uid-web-0"),
			want:       `other: generic: WaitForWrite of /v1, Resource=pods "team-a/web-0": the object has no resourceVersion; pass the object a write returned, or one read from the server`,
			wantCached: "3"},
		{name: "resourceVersion not well formed", written: rywPod("web-0", "x1", "uid-web-0"),
			want: `ResourceVersionError wanted="x1" cached="5"`, wantCached: "3"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			informer, w, stop := rywInformer(t)
			defer stop()
			ctx, cancel := testContext(t)
			defer cancel()
			done := rywWaitAsync(func() error { return informer.WaitForWrite(ctx, tc.written) })
			rywPlayShort(t, informer, w, done, tc.short)
			rywPlay(w, tc.after)
			got := []string{rywOutcome(rywResult(t, done)), rywCachedRV(t, informer, tc.written.Name)}
			if diff := cmp.Diff([]string{tc.want, tc.wantCached}, got); diff != "" {
				t.Errorf("wait outcome and cached resourceVersion (-want +got):\n%s", diff)
			}
		})
	}
}

// rywPlayShort plays events that fall short of what the wait of done waits
// for, waits until the cache has applied them, and fails the test if the
// wait has returned.
func rywPlayShort(t *testing.T, informer generic.Informer[*corev1.Pod], w *watch.RaceFreeFakeWatcher, done <-chan error, events []watch.Event) {
	t.Helper()
	if len(events) == 0 {
		return
	}
	rywPlay(w, events)
	ctx, cancel := testContext(t)
	defer cancel()
	if err := informer.WaitForResourceVersion(ctx, events[len(events)-1].Object.(*corev1.Pod).ResourceVersion); err != nil {
		t.Fatal(err)
	}
	rywPending(t, done, "events short of it")
}

func TestWaitForDelete(t *testing.T) {
	tests := []struct {
		name    string
		deleted *corev1.Pod
		// short are played first: the wait must go on after them; then
		// after. The Lister's Get of deleted's name must show wantCached
		// once every event is applied.
		short, after []watch.Event
		want         string
		wantCached   string
	}{
		{name: "the delete event", deleted: rywPod("web-1", "4", "uid-web-1"),
			short: []watch.Event{rywBookmark("30")}, // the object is still there
			after: []watch.Event{{Type: watch.Deleted, Object: rywPod("web-1", "31", "uid-web-1")}},
			want:  "nil", wantCached: "NotFound"},
		{name: "created and deleted after the cache's resource version", deleted: rywPod("web-2", "12", "uid-web-2"),
			short: []watch.Event{{Type: watch.Added, Object: rywPod("web-2", "12", "uid-web-2")}},
			after: []watch.Event{{Type: watch.Deleted, Object: rywPod("web-2", "13", "uid-web-2")}},
			want:  "nil", wantCached: "NotFound"},
		{name: "created, not cached yet: absent does not pass for deleted", deleted: rywPod("web-2", "12", "uid-web-2"),
			short: []watch.Event{rywBookmark("11")},
			after: []watch.Event{
				{Type: watch.Added, Object: rywPod("web-2", "12", "uid-web-2")},
				{Type: watch.Deleted, Object: rywPod("web-2", "13", "uid-web-2")},
			},
			want: "nil", wantCached: "NotFound"},
		{name: "recreated under the same name", deleted: rywPod("web-1", "4", "uid-web-1"),
			short: []watch.Event{{Type: watch.Modified, Object: rywPod("web-1", "8", "uid-web-1")}},
			after: []watch.Event{
				{Type: watch.Deleted, Object: rywPod("web-1", "9", "uid-web-1")},
				{Type: watch.Added, Object: rywPod("web-1", "10", "uid-new")},
			},
			want: "nil", wantCached: "10"},
		{name: "no UID: waits for the name to be gone", deleted: rywPod("web-1", "4", ""),
			short: []watch.Event{{Type: watch.Modified, Object: rywPod("web-1", "8", "uid-web-1")}},
			after: []watch.Event{{Type: watch.Deleted, Object: rywPod("web-1", "9", "uid-web-1")}},
			want:  "nil", wantCached: "NotFound"},
		{name: "gone already", deleted: rywPod("web-7", "2", "uid-web-7"), want: "nil", wantCached: "NotFound"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			informer, w, stop := rywInformer(t)
			defer stop()
			ctx, cancel := testContext(t)
			defer cancel()
			done := rywWaitAsync(func() error { return informer.WaitForDelete(ctx, tc.deleted) })
			rywPlayShort(t, informer, w, done, tc.short)
			rywPlay(w, tc.after)
			got := []string{rywOutcome(rywResult(t, done))}
			// When the wait returns, a Get answers NotFound or returns an
			// object recreated under the name; the events played after the
			// delete (the recreate) may not be applied yet. Once they are,
			// the cache holds wantCached.
			got = append(got, rywGone(t, informer, tc.deleted))
			if len(tc.after) > 0 {
				if err := informer.WaitForResourceVersion(ctx, tc.after[len(tc.after)-1].Object.(*corev1.Pod).ResourceVersion); err != nil {
					t.Fatal(err)
				}
			}
			got = append(got, rywCachedRV(t, informer, tc.deleted.Name))
			if diff := cmp.Diff([]string{tc.want, "gone", tc.wantCached}, got); diff != "" {
				t.Errorf("wait outcome, the deleted object gone when it returned, and cached resourceVersion once every event is applied (-want +got):\n%s", diff)
			}
		})
	}
}

// rywGone is "gone" if the Lister's Get of deleted's name answers NotFound
// or returns another object (another UID; with deleted's UID empty, none),
// else says what it returns.
func rywGone(t *testing.T, informer generic.Informer[*corev1.Pod], deleted *corev1.Pod) string {
	t.Helper()
	pod, err := informer.Lister().Namespace(deleted.Namespace).Get(deleted.Name)
	switch {
	case apierrors.IsNotFound(err):
		return "gone"
	case err != nil:
		t.Fatal(err)
	case deleted.UID != "" && pod.UID != deleted.UID:
		return "gone"
	}
	return fmt.Sprintf("still cached, UID %q at resourceVersion %q", pod.UID, pod.ResourceVersion)
}

// TestWaitForWriteBadInput: what is not an object written is refused at
// once, with an error, never a panic.
func TestWaitForWriteBadInput(t *testing.T) {
	informer := newInformer[*corev1.Pod](newScriptedListerWatcher(), podsGVR, nil)
	ctx := context.Background()
	tests := []struct {
		name string
		obj  *corev1.Pod
		want string
	}{
		{name: "nil", obj: nil, want: "generic: %s of /v1, Resource=pods: nil object"},
		{name: "no name", obj: rywPod("", "4", "uid"), want: "generic: %s of /v1, Resource=pods: the object has no name"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := []string{fmt.Sprint(informer.WaitForWrite(ctx, tc.obj)), fmt.Sprint(informer.WaitForDelete(ctx, tc.obj))}
			want := []string{fmt.Sprintf(tc.want, "WaitForWrite"), fmt.Sprintf(tc.want, "WaitForDelete")}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestWaitForWriteOutsideSelection is defect 1: an informer never gets an
// event of a write outside its selection (another namespace, labels its
// selector does not match, another shard, the server filtering it or, with
// the ShardedListAndWatch gate off, the informer itself), so its cache's
// resource version did not move and WaitForWrite waited for the server's
// next bookmark, a minute later on kube-apiserver; this fake server sends
// none, so it waited for ever. Several writes in a row must each return,
// the object not cached; a write that moves a cached object out of the
// selection returns once the cache has let it go; a write inside it still
// waits for the cache to hold it.
func TestWaitForWriteOutsideSelection(t *testing.T) {
	team := func(namespace, name, team string, uid types.UID) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, UID: uid, Labels: map[string]string{"team": team}}}
	}
	tests := []struct {
		name string
		// honours: the server applies ShardSelectors (the gate is on).
		honours bool
		// rvMoves: the server sends the informer the writes outside its
		// selection (the gate is off), and the informer's cache's resource
		// version moves with them (the chain hands them on as bookmarks).
		rvMoves bool
		opts    []generic.InformerOption
		// outside makes the i-th object written outside the selection;
		// inside one written inside it.
		outside, inside func(s *shardServer, i int) *corev1.ConfigMap
	}{
		{name: "another namespace", opts: []generic.InformerOption{generic.WithNamespace("team-a")},
			outside: func(s *shardServer, i int) *corev1.ConfigMap {
				return team("team-b", fmt.Sprint("other-", i), "b", s.newUID())
			},
			inside: func(s *shardServer, i int) *corev1.ConfigMap {
				return team("team-a", fmt.Sprint("own-", i), "a", s.newUID())
			}},
		{name: "labels the selector does not match", opts: []generic.InformerOption{generic.WithLabelSelector("team=a")},
			outside: func(s *shardServer, i int) *corev1.ConfigMap {
				return team("team-a", fmt.Sprint("other-", i), "b", s.newUID())
			},
			inside: func(s *shardServer, i int) *corev1.ConfigMap {
				return team("team-a", fmt.Sprint("own-", i), "a", s.newUID())
			}},
		{name: "another shard, the server filtering (gate on)", honours: true, opts: []generic.InformerOption{generic.WithShard(0, 2)},
			outside: func(s *shardServer, i int) *corev1.ConfigMap { return inShard(t, s, fmt.Sprint("other-", i), false) },
			inside:  func(s *shardServer, i int) *corev1.ConfigMap { return inShard(t, s, fmt.Sprint("own-", i), true) }},
		{name: "another shard, the informer filtering (gate off)", rvMoves: true, opts: []generic.InformerOption{generic.WithShard(0, 2)},
			outside: func(s *shardServer, i int) *corev1.ConfigMap { return inShard(t, s, fmt.Sprint("other-", i), false) },
			inside:  func(s *shardServer, i int) *corev1.ConfigMap { return inShard(t, s, fmt.Sprint("own-", i), true) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			server := newShardServer(tc.honours, false)
			factory := newFactory[*corev1.ConfigMap](server.Source, nil, asFactoryOptions(tc.opts)...)
			defer factory.Shutdown()
			informer := acquire(factory, configMapsGVR)
			ctx, cancel := testContext(t)
			defer cancel()
			factory.Start(ctx)
			if err := factory.WaitForCacheSync(ctx).AsError(); err != nil {
				t.Fatal(err)
			}
			for i := range 7 {
				written := tc.outside(server, i)
				server.apply(watch.Added, written)
				if err := informer.WaitForWrite(ctx, written); err != nil {
					t.Fatalf("write %d outside the selection: %v", i, err)
				}
				if _, err := informer.Lister().Namespace(written.Namespace).Get(written.Name); !apierrors.IsNotFound(err) {
					t.Errorf("write %d outside the selection: Get = %v, want NotFound", i, err)
				}
				if !tc.rvMoves {
					continue
				}
				if err := informer.WaitForResourceVersion(ctx, written.ResourceVersion); err != nil {
					t.Fatalf("write %d outside the selection: WaitForResourceVersion: %v", i, err)
				}
			}
			own := tc.inside(server, 0)
			server.apply(watch.Added, own)
			if err := informer.WaitForWrite(ctx, own); err != nil {
				t.Fatalf("a write inside the selection: %v", err)
			}
			if got, err := informer.Lister().Namespace(own.Namespace).Get(own.Name); err != nil || got.ResourceVersion != own.ResourceVersion {
				t.Errorf("a write inside the selection: Get = %v, %v; want it at %s", got, err, own.ResourceVersion)
			}
		})
	}
	t.Run("a write that moves a cached object out of the selection", func(t *testing.T) {
		server := newShardServer(true, false)
		factory := newFactory[*corev1.ConfigMap](server.Source, nil, generic.WithLabelSelector("team=a"))
		defer factory.Shutdown()
		informer := acquire(factory, configMapsGVR)
		ctx, cancel := testContext(t)
		defer cancel()
		held := team("team-a", "moved", "a", server.newUID())
		server.apply(watch.Added, held)
		factory.Start(ctx)
		if err := factory.WaitForCacheSync(ctx).AsError(); err != nil {
			t.Fatal(err)
		}
		moved := held.DeepCopy()
		moved.Labels["team"] = "b"
		written := server.update(moved)
		if err := informer.WaitForWrite(ctx, written); err != nil {
			t.Fatal(err)
		}
		if _, err := informer.Lister().Namespace("team-a").Get("moved"); !apierrors.IsNotFound(err) {
			t.Errorf("Get = %v, want NotFound: the cache still holds the state before the write", err)
		}
	})
}

// TestWaitForResourceVersionOutsideShardInterfaceT is the gate-off case of
// TestWaitForWriteOutsideSelection for an informer whose T is an interface
// (typed.InformerForKind's typed.Object, and so ctrlcache's typed
// informers) given WithExampleObject: an event outside the shard moves
// its cache's resource version, handed on as a bookmark of the example's
// type (bookmarkFunc). Before the chain had a NewT for an interface T, it
// made no bookmark and dropped the event: WaitForResourceVersion of the
// write waited for the server's next bookmark, a minute later on
// kube-apiserver (and ctrlcache's consistent reads with it); this fake
// server sends none, so it waited for ever. TestReshardOfAnInterfaceType
// holds the reshard side of the same fix.
func TestWaitForResourceVersionOutsideShardInterfaceT(t *testing.T) {
	tests := []struct {
		name string
		opts []generic.InformerOption
	}{
		{name: "objects", opts: []generic.InformerOption{generic.WithShard(0, 2), generic.WithExampleObject(&corev1.ConfigMap{})}},
		{name: "a compact store", opts: []generic.InformerOption{generic.WithShard(0, 2), generic.WithExampleObject(&corev1.ConfigMap{}), generic.WithCompactStore(10)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			server := newShardServer(false, false)
			factory := newFactory[interfaceObject](server.Source, nil)
			defer factory.Shutdown()
			informer := acquire(factory, configMapsGVR, tc.opts...)
			ctx, cancel := testContext(t)
			defer cancel()
			factory.Start(ctx)
			if err := factory.WaitForCacheSync(ctx).AsError(); err != nil {
				t.Fatal(err)
			}
			for i := range 3 {
				written := inShard(t, server, fmt.Sprint("other-", i), false)
				server.apply(watch.Added, written)
				if err := informer.WaitForResourceVersion(ctx, written.ResourceVersion); err != nil {
					t.Fatalf("write %d outside the shard: WaitForResourceVersion: %v", i, err)
				}
				if _, err := informer.Lister().Namespace(written.Namespace).Get(written.Name); !apierrors.IsNotFound(err) {
					t.Errorf("write %d outside the shard: Get = %v, want NotFound", i, err)
				}
			}
			own := inShard(t, server, "own", true)
			server.apply(watch.Added, own)
			if err := informer.WaitForWrite(ctx, own); err != nil {
				t.Fatalf("a write inside the shard: %v", err)
			}
			got, err := informer.Lister().Namespace(own.Namespace).Get(own.Name)
			if err != nil {
				t.Fatalf("a write inside the shard: Get: %v", err)
			}
			if diff := cmp.Diff(own.ResourceVersion, got.GetResourceVersion()); diff != "" {
				t.Errorf("a write inside the shard: Get's resourceVersion (-want +got):\n%s", diff)
			}
		})
	}
}

// inShard returns a new ConfigMap named name whose UID places it in shard
// 0 of 2 (in), or in shard 1.
func inShard(t *testing.T, s *shardServer, name string, in bool) *corev1.ConfigMap {
	t.Helper()
	shard0, err := shardcheck.ParseSelector("shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')")
	if err != nil {
		t.Fatal(err)
	}
	for {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: s.newUID()}}
		if matches, err := shard0.Matches(cm); err == nil && matches == in {
			return cm
		}
	}
}
