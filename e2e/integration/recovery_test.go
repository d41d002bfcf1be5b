package integration

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/e2e/apiserver"
	"github.com/generic-informers/generic/internal/widget"
	"github.com/generic-informers/generic/typed"
)

// recoveryTimeout bounds the wait for an informer to recover by itself: the
// NotServed probes back off from 1 s to every 30 s, client-go's reflector
// from 800 ms to 30 s (with jitter), so one full step and the relist fit.
const recoveryTimeout = 90 * time.Second

// firstSyncDeadline is how long the first WaitForCacheSyncError waits, once
// the informer has had the first list's answer (waited for first, however
// loaded the machine): short against the backoff.
const firstSyncDeadline = 5 * time.Second

// notServedProbesWithin is the most requests an informer whose resource
// is not served sends in a window of d that starts after its first 404:
// it probes with wait.Backoff from 1 s, doubling up to 30 s, so the
// probes in the window are at least 2 s, 4 s, 8 s, 16 s, then 30 s apart
// (the first, 1 s after the 404, may be anywhere in it). Timers never fire
// early, so a loaded machine only makes fewer.
func notServedProbesWithin(d time.Duration) int {
	n := 1
	for gap := 2 * time.Second; d >= gap; gap = min(2*gap, 30*time.Second) {
		d -= gap
		n++
	}
	return n
}

// TestNotServedBeforeFirstSyncRecovers starts a typed Widget informer
// before the Widget CRD exists: its first list is a 404, the informer is
// NotServed and the error-returning wait says so. Then the CRD is created:
// the informer's probe finds the resource served, it relists and syncs by
// itself, and serves the Widgets created after.
func TestNotServedBeforeFirstSyncRecovers(t *testing.T) {
	server := apiserver.StartForTest(t) // the CRD must not exist yet: a server of its own
	c := newCluster(t, server)
	apply(t, c, namespaces("unserved")...)

	config, requests := logRequests(server.Config)
	var states stateLog
	factory, err := typed.NewFactory(config, widget.NewScheme(), generic.WithStateHandler(states.record))
	if err != nil {
		t.Fatal(err)
	}
	defer factory.Shutdown()
	// Discovery does not know Widgets yet: the informer is NotServed, asks
	// again with backoff, and syncs once the CRD is installed.
	widgets, err := typed.InformerFor[*widget.Widget](factory)
	if err != nil {
		t.Fatal(err)
	}
	rec := newRecorder(widgetState)
	if _, err := widgets.AddEventHandler(rec); err != nil {
		t.Fatal(err)
	}
	factory.Start(context.Background())
	// The bounded wait below must name the 404: first let the informer
	// have the answer to its first list, however loaded the machine.
	path := "/apis/example.com/v1/widgets"
	waitForStatus(t, widgets, generic.NotServed)
	before, started := requests.count(path), time.Now()

	ctx, cancel := context.WithTimeout(context.Background(), firstSyncDeadline)
	defer cancel()
	err = factory.WaitForCacheSync(ctx).AsError()
	var syncErr *generic.SyncError
	if !errors.As(err, &syncErr) {
		t.Fatalf("error = %v, want a *SyncError", err)
	}
	if diff := cmp.Diff([]unsyncedState{{GVR: widget.GVR.String(), State: generic.NotServed}}, unsyncedStates(syncErr)); diff != "" {
		t.Errorf("informers not synced (-want +got):\n%s", diff)
	}
	if !apierrors.IsNotFound(err) {
		t.Errorf("apierrors.IsNotFound(%v) = false, want true", err)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("error %v does not wrap context.DeadlineExceeded", err)
	}
	// Not served: after a WatchList request and the list it falls back to
	// (both 404), probes backing off from 1 s (with the reflector's
	// jitter: here at about 1.5 s and 4.3 s, then 9 s), not a retry loop.
	sent := requests.count(path) - before
	window := time.Since(started)
	t.Logf("%d requests for widgets in the %v after the informer was NotServed, before the CRD existed", sent, window)
	if limit := notServedProbesWithin(window); sent > limit {
		t.Errorf("%d requests in %v while not served, want at most %d", sent, window, limit)
	}

	apply(t, c, load(t, "unserved", "crds/widgets.example.com.yaml")...)
	waitForStatus(t, widgets, generic.Synced)
	if err := widgets.Status().LastError; err != nil {
		t.Errorf("last error %v once synced, want nil", err)
	}
	if err := factory.WaitForCacheSync(testContext(t)).AsError(); err != nil {
		t.Errorf("WaitForCacheSyncError once synced: %v", err)
	}

	apply(t, c, load(t, "unserved", "widgets.yaml")...)
	if diff := cmp.Diff([]event{
		{Verb: "ADDED", Key: "unserved-a/large", State: "size=10"},
		{Verb: "ADDED", Key: "unserved-a/small", State: "size=1"},
		{Verb: "ADDED", Key: "unserved-b/small", State: "size=2"},
	}, rec.next(t, 3)); diff != "" {
		t.Errorf("events after the CRD was created (-want +got):\n%s", diff)
	}
	all, err := widgets.Lister().List(labels.Everything())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"unserved-a/large", "unserved-a/small", "unserved-b/small"}, keys(all)); diff != "" {
		t.Errorf("cached (-want +got):\n%s", diff)
	}
	small, err := widgets.Lister().Namespace("unserved-b").Get("small")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(widget.Spec{Size: 2, Color: "green", ConfigMapName: "settings"}, small.Spec); diff != "" {
		t.Errorf("typed Widget (-want +got):\n%s", diff)
	}
	checkRecovery(t, &states, generic.NotServed)
}

// TestForbiddenBeforeFirstSyncRecovers starts a ConfigMap informer as a
// user RBAC does not yet allow to list them: the informer is Forbidden and
// the error-returning wait says so. Then a Role and RoleBinding grant list
// and watch: the informer's retries succeed, and it syncs by itself, with
// the ConfigMaps that were there all along and those created after.
func TestForbiddenBeforeFirstSyncRecovers(t *testing.T) {
	server := apiserver.StartForTest(t, "--authorization-mode=RBAC")
	c := newCluster(t, server)
	apply(t, c, namespaces("grant")...)
	apply(t, c, load(t, "grant", "configmaps.yaml")...)

	const user = "late-grant"
	restricted := rest.CopyConfig(server.Config)
	restricted.Impersonate = rest.ImpersonationConfig{UserName: user}
	var states stateLog
	factory, err := typed.NewFactory(restricted, widget.NewScheme(),
		generic.WithNamespace("grant-a"), generic.WithStateHandler(states.record))
	if err != nil {
		t.Fatal(err)
	}
	defer factory.Shutdown()
	configMaps, err := typed.InformerFor[*corev1.ConfigMap](factory)
	if err != nil {
		t.Fatal(err)
	}
	rec := newRecorder(configMapColor)
	if _, err := configMaps.AddEventHandler(rec); err != nil {
		t.Fatal(err)
	}
	factory.Start(context.Background())
	// The bounded wait below must name the 403: first let the informer
	// have the answer to its first list, however loaded the machine.
	waitForStatus(t, configMaps, generic.Forbidden)

	ctx, cancel := context.WithTimeout(context.Background(), firstSyncDeadline)
	defer cancel()
	err = factory.WaitForCacheSync(ctx).AsError()
	var syncErr *generic.SyncError
	if !errors.As(err, &syncErr) {
		t.Fatalf("error = %v, want a *SyncError", err)
	}
	if diff := cmp.Diff([]unsyncedState{{GVR: configMapsGVR.String(), State: generic.Forbidden}}, unsyncedStates(syncErr)); diff != "" {
		t.Errorf("informers not synced (-want +got):\n%s", diff)
	}
	if !apierrors.IsForbidden(err) {
		t.Errorf("apierrors.IsForbidden(%v) = false, want true", err)
	}

	grantListWatch(t, server.Config, "grant-a", user)
	waitForStatus(t, configMaps, generic.Synced)
	if err := configMaps.Status().LastError; err != nil {
		t.Errorf("last error %v once synced, want nil", err)
	}
	if err := factory.WaitForCacheSync(testContext(t)).AsError(); err != nil {
		t.Errorf("WaitForCacheSyncError once synced: %v", err)
	}
	all, err := configMaps.Lister().List(labels.Everything())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"grant-a/flags", "grant-a/settings"}, keys(all)); diff != "" {
		t.Errorf("cached once allowed (-want +got):\n%s", diff)
	}

	// The watch works too: a ConfigMap created now arrives as an event
	// (after the two of the initial list).
	rec.next(t, 2)
	admin := kubernetes.NewForConfigOrDie(server.Config)
	created := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "grant-a", Name: "late"}, Data: map[string]string{"color": "red"}}
	if _, err := admin.CoreV1().ConfigMaps("grant-a").Create(testContext(t), created, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]event{{Verb: "ADDED", Key: "grant-a/late", State: "red"}}, rec.next(t, 1)); diff != "" {
		t.Errorf("events after the grant (-want +got):\n%s", diff)
	}
	checkRecovery(t, &states, generic.Forbidden)
}

// grantListWatch lets user list and watch ConfigMaps in namespace.
func grantListWatch(t *testing.T, admin *rest.Config, namespace, user string) {
	t.Helper()
	client := kubernetes.NewForConfigOrDie(admin)
	ctx := testContext(t)
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "configmap-reader"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"list", "watch"}}},
	}
	if _, err := client.RbacV1().Roles(namespace).Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "configmap-reader"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}},
	}
	if _, err := client.RbacV1().RoleBindings(namespace).Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// unsyncedState is what a test compares of a SyncError's Status.
type unsyncedState struct {
	GVR   string
	State generic.State
}

func unsyncedStates(err *generic.SyncError) []unsyncedState {
	got := make([]unsyncedState, 0, len(err.Unsynced))
	for _, s := range err.Unsynced {
		got = append(got, unsyncedState{GVR: s.GVR.String(), State: s.State})
	}
	return got
}

// waitForStatus waits, bounded by recoveryTimeout, until the informer is in
// state want.
func waitForStatus[T generic.Object](t *testing.T, informer generic.Informer[T], want generic.State) {
	t.Helper()
	started := time.Now()
	err := wait.PollUntilContextTimeout(testContext(t), 100*time.Millisecond, recoveryTimeout, true, func(context.Context) (bool, error) {
		return informer.Status().State == want, nil
	})
	status := informer.Status()
	if err != nil {
		t.Fatalf("state %v after %v, want %v (last error %v)", status.State, recoveryTimeout, want, status.LastError)
	}
	t.Logf("%v %v after %v", status.GVR, want, time.Since(started).Round(time.Millisecond))
}

// checkRecovery checks the states the StateHandler heard, in order:
// Syncing at the start, then trouble, then Synced, by way of Syncing when
// the first successful list is reported before the cache is filled (the
// table in state.go allows both). The handler runs on a goroutine of its
// own: wait for the last change to reach it.
func checkRecovery(t *testing.T, states *stateLog, trouble generic.State) {
	t.Helper()
	withSyncing := []generic.State{generic.Syncing, trouble, generic.Syncing, generic.Synced}
	direct := []generic.State{generic.Syncing, trouble, generic.Synced}
	var got []generic.State
	_ = wait.PollUntilContextTimeout(testContext(t), 20*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		got = states.states()
		return len(got) > 0 && got[len(got)-1] == generic.Synced, nil
	})
	t.Logf("state changes: %v", got)
	if cmp.Equal(direct, got) {
		return
	}
	if diff := cmp.Diff(withSyncing, got); diff != "" {
		t.Errorf("state changes (-want +got):\n%s\n(or, without the second Syncing: %v)", diff, direct)
	}
}
