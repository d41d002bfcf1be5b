package typed

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/internal/widget"
)

// streamServer answers a list with list and a watch with events, in
// mediaType, then holds the watch open.
type streamServer struct {
	mediaType string
	list      []byte
	events    []byte
}

func (s streamServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Query().Get("watch") != "true" {
		w.Header().Set("Content-Type", s.mediaType)
		_, _ = w.Write(s.list)
		return
	}
	w.Header().Set("Content-Type", s.mediaType+";stream=watch")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(s.events)
	w.(http.Flusher).Flush()
	<-r.Context().Done()
}

type watchFrame struct {
	eventType watch.EventType
	object    []byte
}

// jsonEvents frames watch events as the API server does in JSON: one
// metav1.WatchEvent after the other.
func jsonEvents(frames ...watchFrame) []byte {
	var out bytes.Buffer
	for _, f := range frames {
		fmt.Fprintf(&out, `{"type":%q,"object":%s}`+"\n", f.eventType, bytes.TrimSpace(f.object))
	}
	return out.Bytes()
}

// protobufEvents frames watch events as the API server does in protobuf:
// each metav1.WatchEvent's message after its length, 4 bytes big-endian.
func protobufEvents(t *testing.T, frames ...watchFrame) []byte {
	t.Helper()
	var out []byte
	for _, f := range frames {
		event := metav1.WatchEvent{Type: string(f.eventType), Object: runtime.RawExtension{Raw: f.object}}
		message, err := event.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		out = binary.BigEndian.AppendUint32(out, uint32(len(message)))
		out = append(out, message...)
	}
	return out
}

// describe names what a list or watch delivered: its Go type and key.
func describe(obj runtime.Object) string {
	switch o := obj.(type) {
	case *generic.Undecodable:
		return fmt.Sprintf("undecodable %s %s", o.GVK.Kind, o.ObjectName())
	case *metav1.Status:
		return fmt.Sprintf("status %s", o.Reason)
	}
	key, err := cache.MetaNamespaceKeyFunc(obj)
	if err != nil {
		return fmt.Sprintf("%T without key: %v", obj, err)
	}
	return fmt.Sprintf("%T %s", obj, key)
}

// TestRESTSourceDecodesPerItem lists and watches through the typed REST
// client and restSource, against an httptest server: a list with one object
// that does not decode syncs with the others, and a watch event that does
// not decode neither ends the watch nor costs the events after it.
func TestRESTSourceDecodesPerItem(t *testing.T) {
	podKind := corev1.SchemeGroupVersion.WithKind("Pod")
	tests := []struct {
		name       string
		gvr        schema.GroupVersionResource
		protobuf   bool
		server     streamServer
		wantList   []string
		wantEvents []string
	}{
		{
			name: "custom resource, JSON",
			gvr:  widget.GVR,
			server: streamServer{
				mediaType: runtime.ContentTypeJSON,
				list:      readFixture(t, "widget-list-one-bad.json"),
				events: jsonEvents(
					watchFrame{watch.Added, readFixture(t, "widget-good.json")},
					watchFrame{watch.Modified, readFixture(t, "widget-bad.json")},
					watchFrame{watch.Error, readFixture(t, "status-gone.json")},
					watchFrame{watch.Bookmark, readFixture(t, "widget-bookmark.json")},
					watchFrame{watch.Deleted, readFixture(t, "widget-bad-unreadable-metadata.json")},
					watchFrame{watch.Added, readFixture(t, "widget-good.json")},
				),
			},
			wantList: []string{"*widget.Widget team-a/small", "undecodable Widget team-a/broken", "*widget.Widget team-b/large"},
			wantEvents: []string{
				"ADDED *widget.Widget team-a/small",
				"MODIFIED undecodable Widget team-a/broken",
				"ERROR status Expired",
				"BOOKMARK *widget.Widget ",
				"DELETED undecodable Widget ",
				"ADDED *widget.Widget team-a/small",
			},
		},
		{
			name:     "built-in resource, protobuf",
			gvr:      corev1.SchemeGroupVersion.WithResource("pods"),
			protobuf: true,
			server: streamServer{
				mediaType: runtime.ContentTypeProtobuf,
				list:      protobufPodList(t, podMessage(t, "team-a", "web-0"), brokenPodMessage(t, "team-a", "broken"), podMessage(t, "team-b", "web-1")),
				events: protobufEvents(t,
					watchFrame{watch.Added, protobufObject(t, podKind, podMessage(t, "team-a", "web-0"))},
					watchFrame{watch.Modified, protobufObject(t, podKind, brokenPodMessage(t, "team-a", "broken"))},
					watchFrame{watch.Added, protobufObject(t, podKind, podMessage(t, "team-b", "web-1"))},
				),
			},
			wantList: []string{"*v1.Pod team-a/web-0", "undecodable Pod team-a/broken", "*v1.Pod team-b/web-1"},
			wantEvents: []string{
				"ADDED *v1.Pod team-a/web-0",
				"MODIFIED undecodable Pod team-a/broken",
				"ADDED *v1.Pod team-b/web-1",
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			httpServer := httptest.NewServer(tc.server)
			defer httpServer.Close()
			config := &rest.Config{Host: httpServer.URL}
			httpClient, err := rest.HTTPClientFor(config)
			if err != nil {
				t.Fatal(err)
			}
			defer httpClient.CloseIdleConnections()
			client, err := newRESTClient(Clients{Config: config, HTTPClient: httpClient},
				serializer.NewCodecFactory(widget.NewScheme()), nil, tc.gvr.GroupVersion(), tc.protobuf)
			if err != nil {
				t.Fatal(err)
			}
			lw := cache.ToListerWatcherWithContext(restSource(client)(tc.gvr, metav1.NamespaceAll, nil))
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()

			list, err := lw.ListWithContext(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatalf("List: %v", err)
			}
			items, err := meta.ExtractList(list)
			if err != nil {
				t.Fatal(err)
			}
			var gotList []string
			for _, item := range items {
				gotList = append(gotList, describe(item))
			}
			if diff := cmp.Diff(tc.wantList, gotList); diff != "" {
				t.Errorf("listed (-want +got):\n%s", diff)
			}

			w, err := lw.WatchWithContext(ctx, metav1.ListOptions{ResourceVersion: "42"})
			if err != nil {
				t.Fatalf("Watch: %v", err)
			}
			defer w.Stop()
			var gotEvents []string
			for len(gotEvents) < len(tc.wantEvents) {
				select {
				case event, ok := <-w.ResultChan():
					if !ok {
						t.Fatalf("the watch ended after %q", gotEvents)
					}
					gotEvents = append(gotEvents, fmt.Sprintf("%s %s", event.Type, describe(event.Object)))
				case <-ctx.Done():
					t.Fatalf("watched %q, then nothing", gotEvents)
				}
			}
			if diff := cmp.Diff(tc.wantEvents, gotEvents); diff != "" {
				t.Errorf("watched (-want +got):\n%s", diff)
			}
		})
	}
}
