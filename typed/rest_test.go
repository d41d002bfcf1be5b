package typed_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	clientfeatures "k8s.io/client-go/features"
	clientfeaturestesting "k8s.io/client-go/features/testing"
	"k8s.io/client-go/rest"

	"github.com/generic-informers/generic/internal/fixtures"
	"github.com/generic-informers/generic/internal/widget"
	"github.com/generic-informers/generic/typed"
)

// listServer is an httptest API server that answers one list per resource
// in the media type the client prefers (protobuf or JSON, as kube-apiserver
// does for built-in resources), and holds watches open with no events. It
// records the content type of each list response.
type listServer struct {
	t      *testing.T
	codecs serializer.CodecFactory
	lists  map[string]runtime.Object // URL path -> list
	mu     sync.Mutex
	served map[string]string // URL path -> content type of the list answer
}

func (s *listServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	list, ok := s.lists[r.URL.Path]
	if !ok {
		http.NotFound(w, r)
		return
	}
	if r.URL.Query().Get("watch") == "true" {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
		return
	}
	mediaType := runtime.ContentTypeJSON
	if strings.Contains(r.Header.Get("Accept"), runtime.ContentTypeProtobuf) {
		if _, ok := list.(interface{ Unmarshal([]byte) error }); ok {
			mediaType = runtime.ContentTypeProtobuf
		}
	}
	info, _ := runtime.SerializerInfoForMediaType(s.codecs.SupportedMediaTypes(), mediaType)
	// Encoding sets the list's TypeMeta: encode a copy, as requests come
	// in concurrently.
	data, err := runtime.Encode(s.codecs.EncoderForVersion(info.Serializer, versionOf(list)), list.DeepCopyObject())
	if err != nil {
		s.t.Errorf("encode %s: %v", r.URL.Path, err)
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	s.mu.Lock()
	s.served[r.URL.Path] = mediaType
	s.mu.Unlock()
	w.Header().Set("Content-Type", mediaType)
	_, _ = w.Write(data)
}

func versionOf(list runtime.Object) schema.GroupVersion {
	if _, ok := list.(*widget.WidgetList); ok {
		return widget.SchemeGroupVersion
	}
	return corev1.SchemeGroupVersion
}

// TestRESTPathDecodesStraightIntoT reaches the typed REST clients through an
// httptest server: Pods come as protobuf, Widgets (a CRD Go type with no
// protobuf support) as JSON, and both are decoded straight into their Go
// types.
func TestRESTPathDecodesStraightIntoT(t *testing.T) {
	// Plain list-then-watch: the WatchList protocol is exercised against
	// the real API server in the e2e module.
	clientfeaturestesting.SetFeatureDuringTest(t, clientfeatures.WatchListClient, false)
	scheme := widget.NewScheme()
	objs, err := fixtures.Load("../testdata/pods.yaml", "../testdata/widgets.yaml")
	check(t, err)
	typedObjs, err := fixtures.Typed(scheme, objs)
	check(t, err)
	podList, widgetList := &corev1.PodList{}, &widget.WidgetList{}
	for _, obj := range typedObjs {
		switch o := obj.(type) {
		case *corev1.Pod:
			podList.Items = append(podList.Items, *o)
		case *widget.Widget:
			widgetList.Items = append(widgetList.Items, *o)
		}
	}
	podList.ResourceVersion, widgetList.ResourceVersion = "10", "11"
	server := &listServer{t: t, codecs: serializer.NewCodecFactory(scheme), served: map[string]string{},
		lists: map[string]runtime.Object{"/api/v1/pods": podList, "/apis/example.com/v1/widgets": widgetList}}
	httpServer := httptest.NewServer(server)
	defer httpServer.Close()

	factory, err := typed.NewFactoryForClients(typed.Clients{Config: &rest.Config{Host: httpServer.URL}, RESTMapper: newMapper()}, scheme)
	check(t, err)
	defer factory.Shutdown()
	pods := mustInformer[*corev1.Pod](t, factory)
	widgets := mustInformer[*widget.Widget](t, factory)
	podObjects, err := typed.InformerForKind(factory, corev1.SchemeGroupVersion.WithKind("Pod"))
	check(t, err)
	startAndSync(t, factory)

	gotPods, err := pods.Lister().List(labels.Everything())
	check(t, err)
	gotWidgets, err := widgets.Lister().List(labels.Everything())
	check(t, err)
	got := map[string][]string{"pods": names(gotPods), "widgets": names(gotWidgets)}
	want := map[string][]string{
		"pods":    {"team-a/db-0", "team-a/web-0", "team-a/web-1", "team-b/web-0"},
		"widgets": {"team-a/large", "team-a/small", "team-b/small"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("cached (-want +got):\n%s", diff)
	}
	server.mu.Lock()
	defer server.mu.Unlock()
	wantServed := map[string]string{
		"/api/v1/pods":                 runtime.ContentTypeProtobuf,
		"/apis/example.com/v1/widgets": runtime.ContentTypeJSON,
	}
	if diff := cmp.Diff(wantServed, server.served); diff != "" {
		t.Errorf("content types served (-want +got):\n%s", diff)
	}
	db, err := podObjects.Lister().Namespace("team-a").Get("db-0")
	check(t, err)
	if pod, ok := db.(*corev1.Pod); !ok || pod.Spec.Containers[0].Image != "postgres:17" {
		t.Errorf("InformerForKind served %#v, want the *corev1.Pod db-0", db)
	}
	small, err := widgets.Lister().Namespace("team-b").Get("small")
	check(t, err)
	if diff := cmp.Diff(widget.Spec{Size: 2, Color: "green", ConfigMapName: "settings"}, small.Spec); diff != "" {
		t.Errorf("Widget spec (-want +got):\n%s", diff)
	}
}

// TestDiscoveryThatHangsTimesOut: a server that accepts discovery requests
// and never answers makes InformerFor fail after the config's timeout, also
// when the shared HTTP client given has none (as it must not: watches stay
// open), instead of blocking forever.
func TestDiscoveryThatHangsTimesOut(t *testing.T) {
	hanging := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	}))
	defer hanging.Close()
	factory, err := typed.NewFactoryForClients(typed.Clients{
		Config:     &rest.Config{Host: hanging.URL, Timeout: 200 * time.Millisecond},
		HTTPClient: &http.Client{},
	}, widget.NewScheme())
	check(t, err)
	defer factory.Shutdown()
	if _, err := typed.InformerFor[*corev1.Pod](factory); err == nil {
		t.Fatal("InformerFor succeeded with a server that never answers")
	}
}
