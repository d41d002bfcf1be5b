package generictest_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/cache"

	"github.com/generic-informers/generic/generictest"
	"github.com/generic-informers/generic/internal/widget"
	"github.com/generic-informers/generic/typed"
)

// contentTypes are those client-go sends bodies in: JSON, and protobuf,
// which its typed clientset sends by default.
var contentTypes = []struct{ name, contentType string }{
	{name: "JSON", contentType: runtime.ContentTypeJSON},
	{name: "protobuf", contentType: runtime.ContentTypeProtobuf},
}

// restClientset is client-go's real typed clientset over the REST front of
// f, sending bodies in contentType ("" for client-go's default).
func restClientset(t *testing.T, f *generictest.Fake, contentType string) kubernetes.Interface {
	t.Helper()
	config := f.Config()
	config.ContentType = contentType
	c, err := kubernetes.NewForConfig(config)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// restDynamic is client-go's real dynamic client over the REST front of f.
func restDynamic(t *testing.T, f *generictest.Fake) dynamic.Interface {
	t.Helper()
	c, err := dynamic.NewForConfig(f.Config())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// configMapKeys lists the keys of the ConfigMaps of namespace ("" for all)
// through c.
func configMapKeys(ctx context.Context, c kubernetes.Interface, namespace string, opts metav1.ListOptions) ([]string, error) {
	list, err := c.CoreV1().ConfigMaps(namespace).List(ctx, opts)
	if err != nil {
		return nil, err
	}
	var keys []string
	for _, cm := range list.Items {
		keys = append(keys, cm.Namespace+"/"+cm.Name)
	}
	slices.Sort(keys)
	return keys, nil
}

// describePod shows what the tests of pods look at.
func describePod(p *corev1.Pod) string {
	var images []string
	for _, c := range p.Spec.Containers {
		images = append(images, c.Image)
	}
	return fmt.Sprintf("%s/%s generation=%d phase=%s images=%v labels=%v", p.Namespace, p.Name, p.Generation, p.Status.Phase, images, p.Labels)
}

// TestRESTFrontTypedClientset drives client-go's real typed clientset
// through the Fake's REST front (Config), sending JSON and protobuf: every
// verb, and the API server's errors.
func TestRESTFrontTypedClientset(t *testing.T) {
	tests := []struct {
		name string
		do   func(ctx context.Context, c kubernetes.Interface) (any, error)
		want any
		// wantErr tells the error expected, if any.
		wantErr func(error) bool
	}{{
		name: "get",
		do: func(ctx context.Context, c kubernetes.Interface) (any, error) {
			cm, err := c.CoreV1().ConfigMaps("team-a").Get(ctx, "settings", metav1.GetOptions{})
			if err != nil {
				return nil, err
			}
			return fmt.Sprintf("%s/%s generation=%d data=%v", cm.Namespace, cm.Name, cm.Generation, cm.Data), nil
		},
		want: "team-a/settings generation=1 data=map[color:blue]",
	}, {
		name: "get a missing object",
		do: func(ctx context.Context, c kubernetes.Interface) (any, error) {
			return c.CoreV1().ConfigMaps("team-a").Get(ctx, "missing", metav1.GetOptions{})
		},
		wantErr: apierrors.IsNotFound,
	}, {
		name: "list in a namespace",
		do: func(ctx context.Context, c kubernetes.Interface) (any, error) {
			return configMapKeys(ctx, c, "team-a", metav1.ListOptions{})
		},
		want: []string{"team-a/flags", "team-a/settings"},
	}, {
		name: "list in all namespaces by label and field",
		do: func(ctx context.Context, c kubernetes.Interface) (any, error) {
			return configMapKeys(ctx, c, "", metav1.ListOptions{LabelSelector: "app=web", FieldSelector: "metadata.namespace=team-b"})
		},
		want: []string{"team-b/settings"},
	}, {
		name: "a list with a bad selector",
		do: func(ctx context.Context, c kubernetes.Interface) (any, error) {
			return configMapKeys(ctx, c, "", metav1.ListOptions{LabelSelector: "app in ("})
		},
		wantErr: apierrors.IsBadRequest,
	}, {
		name: "create",
		do: func(ctx context.Context, c kubernetes.Interface) (any, error) {
			created, err := c.CoreV1().ConfigMaps("team-a").Create(ctx, &corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{Name: "new"}, Data: map[string]string{"a": "1"},
			}, metav1.CreateOptions{})
			if err != nil {
				return nil, err
			}
			got, err := c.CoreV1().ConfigMaps("team-a").Get(ctx, "new", metav1.GetOptions{})
			if err != nil {
				return nil, err
			}
			return []string{
				fmt.Sprintf("%s/%s generation=%d data=%v", created.Namespace, created.Name, created.Generation, created.Data),
				fmt.Sprintf("same resourceVersion: %t", got.ResourceVersion == created.ResourceVersion),
			}, nil
		},
		want: []string{"team-a/new generation=1 data=map[a:1]", "same resourceVersion: true"},
	}, {
		name: "create what exists",
		do: func(ctx context.Context, c kubernetes.Interface) (any, error) {
			return c.CoreV1().ConfigMaps("team-a").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings"}}, metav1.CreateOptions{})
		},
		wantErr: apierrors.IsAlreadyExists,
	}, {
		name: "create in a namespace not the object's",
		do: func(ctx context.Context, c kubernetes.Interface) (any, error) {
			return c.CoreV1().ConfigMaps("team-a").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "team-b", Name: "new"}}, metav1.CreateOptions{})
		},
		wantErr: apierrors.IsBadRequest,
	}, {
		name: "update",
		do: func(ctx context.Context, c kubernetes.Interface) (any, error) {
			cm, err := c.CoreV1().ConfigMaps("team-a").Get(ctx, "settings", metav1.GetOptions{})
			if err != nil {
				return nil, err
			}
			cm.Data["color"] = "teal"
			updated, err := c.CoreV1().ConfigMaps("team-a").Update(ctx, cm, metav1.UpdateOptions{})
			if err != nil {
				return nil, err
			}
			return fmt.Sprintf("generation=%d data=%v newer=%t", updated.Generation, updated.Data, updated.ResourceVersion > cm.ResourceVersion), nil
		},
		want: "generation=2 data=map[color:teal] newer=true",
	}, {
		name: "update with a stale resourceVersion",
		do: func(ctx context.Context, c kubernetes.Interface) (any, error) {
			cm, err := c.CoreV1().ConfigMaps("team-a").Get(ctx, "settings", metav1.GetOptions{})
			if err != nil {
				return nil, err
			}
			changed := cm.DeepCopy()
			changed.Data["color"] = "red" // an update that changes nothing keeps the resourceVersion
			if _, err := c.CoreV1().ConfigMaps("team-a").Update(ctx, changed, metav1.UpdateOptions{}); err != nil {
				return nil, fmt.Errorf("the first update: %w", err)
			}
			return c.CoreV1().ConfigMaps("team-a").Update(ctx, cm, metav1.UpdateOptions{})
		},
		wantErr: apierrors.IsConflict,
	}, {
		name: "update the status of a pod",
		do: func(ctx context.Context, c kubernetes.Interface) (any, error) {
			pod, err := c.CoreV1().Pods("team-a").Get(ctx, "web-0", metav1.GetOptions{})
			if err != nil {
				return nil, err
			}
			pod.Status.Phase = corev1.PodRunning
			pod.Spec.Containers[0].Image = "ignored"
			updated, err := c.CoreV1().Pods("team-a").UpdateStatus(ctx, pod, metav1.UpdateOptions{})
			if err != nil {
				return nil, err
			}
			return describePod(updated), nil
		},
		want: "team-a/web-0 generation=1 phase=Running images=[nginx:1.27] labels=map[app:web tier:frontend]",
	}, {
		name: "merge patch",
		do: func(ctx context.Context, c kubernetes.Interface) (any, error) {
			pod, err := c.CoreV1().Pods("team-a").Patch(ctx, "web-0", types.MergePatchType, []byte(`{"metadata":{"labels":{"tier":null,"x":"y"}}}`), metav1.PatchOptions{})
			if err != nil {
				return nil, err
			}
			return describePod(pod), nil
		},
		want: "team-a/web-0 generation=1 phase= images=[nginx:1.27] labels=map[app:web x:y]",
	}, {
		name: "strategic merge patch",
		do: func(ctx context.Context, c kubernetes.Interface) (any, error) {
			patch := `{"spec":{"containers":[{"name":"sidecar","image":"envoy"}]}}`
			pod, err := c.CoreV1().Pods("team-a").Patch(ctx, "web-0", types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{})
			if err != nil {
				return nil, err
			}
			return describePod(pod), nil
		},
		// Containers merge by name.
		want: "team-a/web-0 generation=2 phase= images=[envoy nginx:1.27] labels=map[app:web tier:frontend]",
	}, {
		name: "JSON patch",
		do: func(ctx context.Context, c kubernetes.Interface) (any, error) {
			patch := `[{"op":"test","path":"/data/color","value":"blue"},{"op":"replace","path":"/data/color","value":"red"}]`
			cm, err := c.CoreV1().ConfigMaps("team-a").Patch(ctx, "settings", types.JSONPatchType, []byte(patch), metav1.PatchOptions{})
			if err != nil {
				return nil, err
			}
			return cm.Data, nil
		},
		want: map[string]string{"color": "red"},
	}, {
		name: "JSON patch whose test fails",
		do: func(ctx context.Context, c kubernetes.Interface) (any, error) {
			patch := `[{"op":"test","path":"/data/color","value":"green"}]`
			return c.CoreV1().ConfigMaps("team-a").Patch(ctx, "settings", types.JSONPatchType, []byte(patch), metav1.PatchOptions{})
		},
		wantErr: apierrors.IsInvalid, // 422
	}, {
		name: "status patch",
		do: func(ctx context.Context, c kubernetes.Interface) (any, error) {
			patch := `{"metadata":{"labels":{"x":"y"}},"spec":{"nodeName":"elsewhere"},"status":{"phase":"Succeeded"}}`
			pod, err := c.CoreV1().Pods("team-a").Patch(ctx, "web-0", types.MergePatchType, []byte(patch), metav1.PatchOptions{}, "status")
			if err != nil {
				return nil, err
			}
			return describePod(pod) + " node=" + pod.Spec.NodeName, nil
		},
		want: "team-a/web-0 generation=1 phase=Succeeded images=[nginx:1.27] labels=map[app:web tier:frontend] node=node-1",
	}, {
		name: "apply",
		do: func(ctx context.Context, c kubernetes.Interface) (any, error) {
			applied := corev1ac.ConfigMap("settings", "team-a").WithData(map[string]string{"size": "L"})
			cm, err := c.CoreV1().ConfigMaps("team-a").Apply(ctx, applied, metav1.ApplyOptions{FieldManager: "test", Force: true})
			if err != nil {
				return nil, err
			}
			return fmt.Sprintf("generation=%d data=%v", cm.Generation, cm.Data), nil
		},
		want: "generation=2 data=map[color:blue size:L]",
	}, {
		name: "delete",
		do: func(ctx context.Context, c kubernetes.Interface) (any, error) {
			if err := c.CoreV1().ConfigMaps("team-a").Delete(ctx, "flags", metav1.DeleteOptions{}); err != nil {
				return nil, fmt.Errorf("delete: %v", err) // not wrapped: not the error wanted
			}
			return configMapKeys(ctx, c, "team-a", metav1.ListOptions{})
		},
		want: []string{"team-a/settings"},
	}, {
		name: "delete a missing object",
		do: func(ctx context.Context, c kubernetes.Interface) (any, error) {
			return nil, c.CoreV1().ConfigMaps("team-a").Delete(ctx, "missing", metav1.DeleteOptions{})
		},
		wantErr: apierrors.IsNotFound,
	}, {
		name: "delete whose precondition fails",
		do: func(ctx context.Context, c kubernetes.Interface) (any, error) {
			stale := "1"
			return nil, c.CoreV1().ConfigMaps("team-a").Delete(ctx, "flags", metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: &stale}})
		},
		wantErr: apierrors.IsConflict,
	}, {
		name: "delete a collection",
		do: func(ctx context.Context, c kubernetes.Interface) (any, error) {
			if err := c.CoreV1().ConfigMaps("team-a").DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: "app=web"}); err != nil {
				return nil, fmt.Errorf("delete collection: %v", err)
			}
			return configMapKeys(ctx, c, "", metav1.ListOptions{})
		},
		want: []string{"team-a/flags", "team-b/settings"},
	}, {
		name: "watch",
		do: func(ctx context.Context, c kubernetes.Interface) (any, error) {
			return c.CoreV1().ConfigMaps("team-a").Watch(ctx, metav1.ListOptions{})
		},
		wantErr: apierrors.IsMethodNotSupported,
	}}
	for _, tc := range tests {
		for _, ct := range contentTypes {
			t.Run(tc.name+"/"+ct.name, func(t *testing.T) {
				t.Parallel()
				fake := generictest.New(t, scheme.Scheme, generictest.Files("../testdata/configmaps.yaml", "../testdata/pods.yaml"))
				got, err := tc.do(context.Background(), restClientset(t, fake, ct.contentType))
				if tc.wantErr != nil {
					if !tc.wantErr(err) {
						t.Fatalf("error %v, want another", err)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("(-want +got):\n%s", diff)
				}
			})
		}
	}
}

// TestRESTFrontConflictMessage: a stale update fails as kube-apiserver's
// does, with its message.
func TestRESTFrontConflictMessage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	fake := generictest.New(t, scheme.Scheme, generictest.Files("../testdata/configmaps.yaml"))
	c := restClientset(t, fake, "")
	cm, err := c.CoreV1().ConfigMaps("team-a").Get(ctx, "settings", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	changed := cm.DeepCopy()
	changed.Data["color"] = "red" // an update that changes nothing keeps the resourceVersion
	if _, err := c.CoreV1().ConfigMaps("team-a").Update(ctx, changed, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err = c.CoreV1().ConfigMaps("team-a").Update(ctx, cm, metav1.UpdateOptions{})
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		t.Fatalf("error %v, want an API status", err)
	}
	got := status.Status()
	want := metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusConflict, Reason: metav1.StatusReasonConflict,
		Message: `Operation cannot be fulfilled on configmaps "settings": the object has been modified; please apply your changes to the latest version and try again`,
		Details: &metav1.StatusDetails{Kind: "configmaps", Name: "settings"},
	}
	if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(metav1.Status{}, "TypeMeta")); diff != "" {
		t.Errorf("status (-want +got):\n%s", diff)
	}
}

// TestRESTFrontBodies: client-go sends JSON, or protobuf for built-in
// types when asked to, and the REST front reads both.
func TestRESTFrontBodies(t *testing.T) {
	tests := []struct {
		name        string
		contentType string
		want        []string
	}{{
		name:        "JSON",
		contentType: runtime.ContentTypeJSON,
		want: []string{
			"POST /api/v1/namespaces/team-a/configmaps application/json",
			"PUT /api/v1/namespaces/team-a/configmaps/new application/json",
			"DELETE /api/v1/namespaces/team-a/configmaps/new application/json",
		},
	}, {
		name:        "protobuf",
		contentType: runtime.ContentTypeProtobuf,
		want: []string{
			"POST /api/v1/namespaces/team-a/configmaps application/vnd.kubernetes.protobuf",
			"PUT /api/v1/namespaces/team-a/configmaps/new application/vnd.kubernetes.protobuf",
			"DELETE /api/v1/namespaces/team-a/configmaps/new application/vnd.kubernetes.protobuf",
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			fake := generictest.New(t, scheme.Scheme)
			c := restClientset(t, fake, tc.contentType).CoreV1().ConfigMaps("team-a")
			created, err := c.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "new"}, Data: map[string]string{"a": "1"}}, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			created.Data["a"] = "2"
			updated, err := c.Update(ctx, created, metav1.UpdateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(map[string]string{"a": "2"}, updated.Data); diff != "" {
				t.Errorf("data (-want +got):\n%s", diff)
			}
			rv := updated.ResourceVersion
			if err := c.Delete(ctx, "new", metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: &rv}}); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, generictest.RESTRequests(fake)); diff != "" {
				t.Errorf("requests (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRESTFrontCustomResources drives custom resources of the fixtures
// through the REST front, with client-go's real dynamic client and with a
// typed client of the Fake's factory (typed.ClientFor).
func TestRESTFrontCustomResources(t *testing.T) {
	gizmos := schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "gizmos"}
	names := func(list *unstructured.UnstructuredList) []string {
		var ns []string
		for _, item := range list.Items {
			ns = append(ns, item.GetName())
		}
		slices.Sort(ns)
		return ns
	}
	tests := []struct {
		name    string
		do      func(ctx context.Context, f *generictest.Fake, c dynamic.Interface) (any, error)
		want    any
		wantErr func(error) bool
	}{{
		name: "get a namespaced one",
		do: func(ctx context.Context, _ *generictest.Fake, c dynamic.Interface) (any, error) {
			u, err := c.Resource(widget.GVR).Namespace("team-a").Get(ctx, "small", metav1.GetOptions{})
			if err != nil {
				return nil, err
			}
			size, _, _ := unstructured.NestedInt64(u.Object, "spec", "size")
			return fmt.Sprintf("%s %s size=%d", u.GetAPIVersion(), u.GetKind(), size), nil
		},
		want: "example.com/v1 Widget size=1",
	}, {
		name: "list cluster-scoped ones by label",
		do: func(ctx context.Context, _ *generictest.Fake, c dynamic.Interface) (any, error) {
			list, err := c.Resource(gizmos).List(ctx, metav1.ListOptions{LabelSelector: "tier=gold"})
			if err != nil {
				return nil, err
			}
			return fmt.Sprintf("%s %s %v", list.GetAPIVersion(), list.GetKind(), names(list)), nil
		},
		want: "example.com/v1 GizmoList [alpha]",
	}, {
		name: "create a cluster-scoped one",
		do: func(ctx context.Context, _ *generictest.Fake, c dynamic.Interface) (any, error) {
			gizmo := &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "example.com/v1", "kind": "Gizmo",
				"metadata": map[string]any{"name": "gamma"}, "spec": map[string]any{"power": int64(5)},
			}}
			created, err := c.Resource(gizmos).Create(ctx, gizmo, metav1.CreateOptions{})
			if err != nil {
				return nil, err
			}
			list, err := c.Resource(gizmos).List(ctx, metav1.ListOptions{})
			if err != nil {
				return nil, err
			}
			return fmt.Sprintf("generation=%d %v", created.GetGeneration(), names(list)), nil
		},
		want: "generation=1 [alpha beta gamma]",
	}, {
		name: "merge patch",
		do: func(ctx context.Context, _ *generictest.Fake, c dynamic.Interface) (any, error) {
			u, err := c.Resource(gizmos).Patch(ctx, "beta", types.MergePatchType, []byte(`{"spec":{"power":4}}`), metav1.PatchOptions{})
			if err != nil {
				return nil, err
			}
			power, _, _ := unstructured.NestedInt64(u.Object, "spec", "power")
			return fmt.Sprintf("generation=%d power=%d", u.GetGeneration(), power), nil
		},
		want: "generation=2 power=4",
	}, {
		name: "strategic merge patch",
		do: func(ctx context.Context, _ *generictest.Fake, c dynamic.Interface) (any, error) {
			return c.Resource(gizmos).Patch(ctx, "beta", types.StrategicMergePatchType, []byte(`{"spec":{"power":4}}`), metav1.PatchOptions{})
		},
		wantErr: apierrors.IsUnsupportedMediaType,
	}, {
		name: "delete",
		do: func(ctx context.Context, _ *generictest.Fake, c dynamic.Interface) (any, error) {
			if err := c.Resource(gizmos).Delete(ctx, "beta", metav1.DeleteOptions{}); err != nil {
				return nil, fmt.Errorf("delete: %v", err)
			}
			list, err := c.Resource(gizmos).List(ctx, metav1.ListOptions{})
			if err != nil {
				return nil, err
			}
			return names(list), nil
		},
		want: []string{"alpha"},
	}, {
		name: "a typed client's update and status update",
		do: func(ctx context.Context, f *generictest.Fake, _ dynamic.Interface) (any, error) {
			widgets, err := typed.ClientFor[*widget.Widget](f.Factory())
			if err != nil {
				return nil, err
			}
			w, err := widgets.Get(ctx, cache.ObjectName{Namespace: "team-a", Name: "small"}, metav1.GetOptions{})
			if err != nil {
				return nil, err
			}
			w.Spec.Size = 2
			w.Status.Ready = true // kept as stored: Widgets have a status subresource
			if w, err = widgets.Update(ctx, w, metav1.UpdateOptions{}); err != nil {
				return nil, fmt.Errorf("update: %w", err)
			}
			first := fmt.Sprintf("generation=%d size=%d ready=%t", w.Generation, w.Spec.Size, w.Status.Ready)
			w.Spec.Size = 3 // ignored by a status update
			w.Status.Ready = true
			if w, err = widgets.UpdateStatus(ctx, w, metav1.UpdateOptions{}); err != nil {
				return nil, fmt.Errorf("status update: %w", err)
			}
			return []string{first, fmt.Sprintf("generation=%d size=%d ready=%t", w.Generation, w.Spec.Size, w.Status.Ready)}, nil
		},
		want: []string{"generation=2 size=2 ready=false", "generation=2 size=2 ready=true"},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fake := generictest.New(t, widget.NewScheme(), generictest.Files(
				"../testdata/crds/widgets.example.com.yaml", "../testdata/widgets.yaml",
				"../testdata/crds/gizmos.example.com.yaml", "../testdata/gizmos.yaml"))
			got, err := tc.do(context.Background(), fake, restDynamic(t, fake))
			if tc.wantErr != nil {
				if !tc.wantErr(err) {
					t.Fatalf("error %v, want another", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// response is what the tests of paths look at of a response.
type response struct {
	Code        int
	ContentType string
	// APIVersion and Kind are the body's; Reason is a Status's.
	APIVersion, Kind string
	Reason           metav1.StatusReason
}

// TestRESTFrontPaths sends raw requests to the REST front: what it serves
// answers as the API server does, and what it does not serve answers 404
// (discovery too), 405 (watches, methods) or 415 (bodies), with a Status.
func TestRESTFrontPaths(t *testing.T) {
	status := func(code int, reason metav1.StatusReason) response {
		return response{Code: code, ContentType: "application/json", APIVersion: "v1", Kind: "Status", Reason: reason}
	}
	object := func(code int, apiVersion, kind string) response {
		return response{Code: code, ContentType: "application/json", APIVersion: apiVersion, Kind: kind}
	}
	tests := []struct {
		name, method, path string
		contentType, body  string
		want               response
	}{
		{name: "a namespaced object", method: "GET", path: "/api/v1/namespaces/team-a/configmaps/settings", want: object(200, "v1", "ConfigMap")},
		{name: "a cluster-scoped object", method: "GET", path: "/api/v1/namespaces/team-a", want: object(200, "v1", "Namespace")},
		{name: "a namespace's status", method: "GET", path: "/api/v1/namespaces/team-a/status", want: object(200, "v1", "Namespace")},
		{name: "a list in all namespaces", method: "GET", path: "/api/v1/configmaps", want: object(200, "v1", "ConfigMapList")},
		{name: "a custom resource", method: "GET", path: "/apis/example.com/v1/namespaces/team-a/widgets/small", want: object(200, "example.com/v1", "Widget")},
		{name: "a cluster-scoped custom resource", method: "GET", path: "/apis/example.com/v1/gizmos/alpha", want: object(200, "example.com/v1", "Gizmo")},
		{name: "a create", method: "POST", path: "/api/v1/namespaces/team-a/configmaps", contentType: "application/json",
			body: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"new"}}`, want: object(201, "v1", "ConfigMap")},
		{name: "a create of a body with no kind", method: "POST", path: "/api/v1/namespaces/team-a/configmaps", contentType: "application/yaml",
			body: "metadata:\n  name: new\n", want: object(201, "v1", "ConfigMap")},
		{name: "a create of another kind", method: "POST", path: "/api/v1/namespaces/team-a/configmaps", contentType: "application/json",
			body: `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"new"}}`, want: status(400, metav1.StatusReasonBadRequest)},
		{name: "an update of another name", method: "PUT", path: "/api/v1/namespaces/team-a/configmaps/settings", contentType: "application/json",
			body: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"flags"}}`, want: status(400, metav1.StatusReasonBadRequest)},
		{name: "a body of an unknown media type", method: "POST", path: "/api/v1/namespaces/team-a/configmaps", contentType: "text/plain",
			body: "new", want: status(415, metav1.StatusReasonUnsupportedMediaType)},
		{name: "a patch of an unknown type", method: "PATCH", path: "/api/v1/namespaces/team-a/configmaps/settings", contentType: "application/json",
			body: "{}", want: status(415, metav1.StatusReasonUnsupportedMediaType)},
		{name: "a watch", method: "GET", path: "/api/v1/namespaces/team-a/configmaps?watch=true", want: status(405, metav1.StatusReasonMethodNotAllowed)},
		{name: "a create in all namespaces", method: "POST", path: "/api/v1/configmaps", contentType: "application/json",
			body: `{"metadata":{"name":"new"}}`, want: status(405, metav1.StatusReasonMethodNotAllowed)},
		{name: "a POST to an object", method: "POST", path: "/api/v1/namespaces/team-a/configmaps/settings", contentType: "application/json",
			body: `{}`, want: status(405, metav1.StatusReasonMethodNotAllowed)},
		{name: "discovery", method: "GET", path: "/api", want: status(404, metav1.StatusReasonNotFound)},
		{name: "a group's discovery", method: "GET", path: "/apis/example.com/v1", want: status(404, metav1.StatusReasonNotFound)},
		{name: "the version", method: "GET", path: "/version", want: status(404, metav1.StatusReasonNotFound)},
		{name: "an unknown resource", method: "GET", path: "/apis/example.com/v1/namespaces/team-a/gadgets", want: status(404, metav1.StatusReasonNotFound)},
		{name: "a namespaced object outside a namespace", method: "GET", path: "/api/v1/configmaps/settings", want: status(404, metav1.StatusReasonNotFound)},
		{name: "a cluster-scoped object in a namespace", method: "GET", path: "/apis/example.com/v1/namespaces/team-a/gizmos/alpha", want: status(404, metav1.StatusReasonNotFound)},
		{name: "a subresource not served", method: "GET", path: "/api/v1/namespaces/team-a/pods/web-0/log", want: status(404, metav1.StatusReasonNotFound)},
		{name: "the status of a resource that has none", method: "GET", path: "/apis/example.com/v1/gizmos/alpha/status", want: status(404, metav1.StatusReasonNotFound)},
		{name: "the status of a resource that has one", method: "GET", path: "/apis/example.com/v1/namespaces/team-a/widgets/small/status", want: object(200, "example.com/v1", "Widget")},
		{name: "a missing object", method: "GET", path: "/api/v1/namespaces/team-a/configmaps/missing", want: status(404, metav1.StatusReasonNotFound)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fake := generictest.New(t, widget.NewScheme(), generictest.Files(
				"../testdata/configmaps.yaml", "../testdata/pods.yaml", "../testdata/namespaces.yaml",
				"../testdata/crds/widgets.example.com.yaml", "../testdata/widgets.yaml",
				"../testdata/crds/gizmos.example.com.yaml", "../testdata/gizmos.yaml"))
			client := &http.Client{Transport: fake.Config().Transport}
			req, err := http.NewRequestWithContext(context.Background(), tc.method, "http://generictest.fake"+tc.path, strings.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			if tc.contentType != "" {
				req.Header.Set("Content-Type", tc.contentType)
			}
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			var got struct {
				APIVersion, Kind string
				Reason           metav1.StatusReason
			}
			if err := json.Unmarshal(body, &got); err != nil {
				t.Fatalf("body %q: %v", body, err)
			}
			if diff := cmp.Diff(tc.want, response{
				Code: resp.StatusCode, ContentType: resp.Header.Get("Content-Type"),
				APIVersion: got.APIVersion, Kind: got.Kind, Reason: got.Reason,
			}); diff != "" {
				t.Errorf("response (-want +got):\n%s\nbody: %s", diff, body)
			}
		})
	}
}
