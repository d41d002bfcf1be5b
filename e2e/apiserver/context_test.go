package apiserver_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/generic-informers/generic/e2e/apiserver"
)

var errStopAsked = errors.New("stop asked")

// TestStartContext: Start's context bounds only the start. Done before the
// start or while it runs, Start returns an error wrapping the context's
// cause and leaves no temp dir behind (and the process lives on:
// kube-apiserver's post-start hooks exit it when their context ends while
// they run); cancelled after Start has returned, the server keeps serving,
// its watches included.
func TestStartContext(t *testing.T) {
	// A temp dir of this test's own, as in TestStopLeavesNothingBehind.
	t.Setenv("TMPDIR", t.TempDir())
	tests := []struct {
		name string
		// newCtx returns the context for Start and what ends it after
		// Start has returned.
		newCtx  func() (context.Context, func())
		wantErr error
	}{
		{
			name: "cancelled before the start",
			newCtx: func() (context.Context, func()) {
				ctx, cancel := context.WithCancelCause(context.Background())
				cancel(errStopAsked)
				return ctx, func() {}
			},
			wantErr: errStopAsked,
		},
		{
			// The start takes seconds: the deadline passes while it runs
			// (or, on a machine loaded enough, before it begins).
			name: "deadline while starting",
			newCtx: func() (context.Context, func()) {
				return context.WithTimeout(context.Background(), 100*time.Millisecond)
			},
			wantErr: context.DeadlineExceeded,
		},
		{
			name: "cancelled after Start returned",
			newCtx: func() (context.Context, func()) {
				ctx, cancel := context.WithCancelCause(context.Background())
				return ctx, func() { cancel(errStopAsked) }
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tempBefore := tempEntries(t)
			ctx, cancel := tc.newCtx()
			defer cancel()
			server, err := apiserver.Start(ctx, apiserver.Options{})
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("Start: %v, want an error wrapping %v", err, tc.wantErr)
				}
				if diff := cmp.Diff(tempBefore, tempEntries(t)); diff != "" {
					t.Errorf("temp entries (-before +after):\n%s", diff)
				}
				return
			}
			if err != nil {
				t.Fatalf("Start: %v", err)
			}
			defer server.Stop()
			servesAfterCancel(t, server, cancel)
		})
	}
}

// servesAfterCancel opens a watch of Namespaces, calls cancel, creates a
// Namespace and waits for the watch to report it: a server stopping would
// close the watch or refuse the create.
func servesAfterCancel(t *testing.T, server *apiserver.Server, cancel func()) {
	t.Helper()
	ctx := context.Background()
	namespaces := kubernetes.NewForConfigOrDie(server.Config).CoreV1().Namespaces()
	w, err := namespaces.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=after-cancel"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	cancel()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "after-cancel"}}
	if _, err := namespaces.Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create a Namespace after cancelling Start's context: %v", err)
	}
	deadline := time.After(time.Minute)
	for {
		select {
		case event, open := <-w.ResultChan():
			if !open {
				t.Fatal("the watch ended after Start's context was cancelled")
			}
			if got, ok := event.Object.(*corev1.Namespace); ok && event.Type == watch.Added && got.Name == ns.Name {
				return
			}
		case <-deadline:
			t.Fatal("no ADDED event for the Namespace within a minute of cancelling Start's context")
		}
	}
}
