package integration

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic/dynamicinformer"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	genericunstructured "github.com/generic-informers/generic/unstructured"
)

// TestEqualityCorpus creates the objects of testdata/corpus (built-in kinds
// with integers, quantities, booleans, nested maps and lists and absent
// fields; CRDs with numbers, int-or-string, nested objects and fields whose
// content the schema leaves open) on the embedded server, reads them through
// this library's unstructured informers and through client-go's
// dynamicinformer, and requires the objects to be equal (cmp.Diff: an
// int64 must stay int64, a float64 float64, an absent field absent). It also
// requires the corpus to hold what it claims, so that it cannot shrink
// unnoticed.
func TestEqualityCorpus(t *testing.T) {
	const prefix = "corpus"
	c := newCluster(t, shared)
	apply(t, c, namespaces(prefix)...)
	objs := loadExact(t, prefix, "corpus/crds.yaml", "corpus/objects.yaml")
	apply(t, c, objs...)

	// The resources of the corpus, and how many objects each has.
	want := map[schema.GroupVersionResource]int{}
	for _, obj := range objs {
		if obj.GetKind() == "CustomResourceDefinition" {
			continue
		}
		gvk := obj.GroupVersionKind()
		mapping, err := c.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			t.Fatalf("%v: %v", gvk, err)
		}
		want[mapping.Resource]++
	}
	if len(want) < 10 {
		t.Fatalf("the corpus has %d kinds, want at least 10", len(want))
	}
	gvrs := make([]schema.GroupVersionResource, 0, len(want))
	for gvr := range want {
		gvrs = append(gvrs, gvr)
	}
	sort.Slice(gvrs, func(i, j int) bool { return gvrs[i].String() < gvrs[j].String() })

	clientGo := dynamicinformer.NewFilteredDynamicSharedInformerFactory(c.Dynamic, 0, metav1.NamespaceAll,
		func(options *metav1.ListOptions) { options.LabelSelector = testLabel + "=" + prefix })
	ctx, cancel := context.WithCancel(context.Background())
	defer func() {
		cancel()
		clientGo.Shutdown()
	}()
	for _, gvr := range gvrs {
		clientGo.ForResource(gvr)
	}
	clientGo.Start(ctx.Done())
	for gvr, ok := range clientGo.WaitForCacheSync(testContext(t).Done()) {
		if !ok {
			t.Fatalf("client-go's informer of %v did not sync", gvr)
		}
	}

	// The library's ways to an unstructured cache: the drop-in over
	// client-go's dynamic client, and the one factory's REST clients,
	// which decode JSON in one pass and built-in kinds from protobuf,
	// converted once (or, UnstructuredFromJSON, JSON only). The recorded
	// content types show that each took the way it claims.
	drop := genericunstructured.NewFilteredDynamicSharedInformerFactory(c.Dynamic, 0, metav1.NamespaceAll,
		func(options *metav1.ListOptions) { options.LabelSelector = testLabel + "=" + prefix })
	defer drop.Shutdown()
	for _, gvr := range gvrs {
		drop.ForResource(gvr)
	}
	drop.Start(testContext(t).Done())
	for gvr, synced := range drop.WaitForCacheSync(testContext(t).Done()) {
		if !synced {
			t.Fatalf("the drop-in's informer of %v did not sync", gvr)
		}
	}
	viaProtobuf, protobufTypes := unstructuredForAll(t, c, prefix, false, gvrs)
	viaJSON, jsonTypes := unstructuredForAll(t, c, prefix, true, gvrs)
	readers := []struct {
		name string
		list func(schema.GroupVersionResource) func(labels.Selector) ([]*unstructured.Unstructured, error)
	}{
		{"drop-in", func(gvr schema.GroupVersionResource) func(labels.Selector) ([]*unstructured.Unstructured, error) {
			return genericunstructured.New(drop.ForResource(gvr).Informer().GetIndexer(), gvr).List
		}},
		{"UnstructuredFor", viaProtobuf},
		{"UnstructuredFor, UnstructuredFromJSON", viaJSON},
	}

	seen := valueKinds{}
	for _, gvr := range gvrs {
		t.Run(gvr.Resource+"."+gvr.Group, func(t *testing.T) {
			// The informers list once; the embedded server runs no
			// controllers, so the objects do not change under them. Wait
			// until each holds every object of the corpus.
			wantObjs := waitForObjects(t, func(s labels.Selector) ([]*unstructured.Unstructured, error) {
				return asUnstructured(clientGo.ForResource(gvr).Lister().List(s))
			}, want[gvr])
			for _, reader := range readers {
				got := waitForObjects(t, reader.list(gvr), want[gvr])
				if diff := cmp.Diff(wantObjs, got); diff != "" {
					t.Errorf("%s: objects (-client-go dynamicinformer +generic):\n%s", reader.name, diff)
				}
				for _, obj := range got {
					seen.add(obj.Object)
				}
			}
		})
	}
	wantTypes := map[string]string{}
	for _, gvr := range gvrs {
		wantTypes[gvr.String()] = "application/json"
		if clientgoscheme.Scheme.IsVersionRegistered(gvr.GroupVersion()) {
			wantTypes[gvr.String()] = "application/vnd.kubernetes.protobuf"
		}
	}
	if diff := cmp.Diff(wantTypes, protobufTypes.byResource(gvrs)); diff != "" {
		t.Errorf("content types UnstructuredFor was served (-want +got):\n%s", diff)
	}
	for gvr := range wantTypes {
		wantTypes[gvr] = "application/json"
	}
	if diff := cmp.Diff(wantTypes, jsonTypes.byResource(gvrs)); diff != "" {
		t.Errorf("content types UnstructuredFor with UnstructuredFromJSON was served (-want +got):\n%s", diff)
	}

	// The corpus holds every JSON type, as Go's unstructured types.
	if diff := cmp.Diff(valueKinds{
		"[]interface {}": true, "bool": true, "float64": true, "int64": true,
		"map[string]interface {}": true, "string": true,
	}, seen); diff != "" {
		t.Errorf("value types in the corpus (-want +got):\n%s", diff)
	}

	// A few values, read through the library, pinned by type.
	dropLister := func(gvr schema.GroupVersionResource) genericunstructured.Lister {
		return genericunstructured.New(drop.ForResource(gvr).Informer().GetIndexer(), gvr)
	}
	specimen, err := dropLister(schema.GroupVersionResource{Group: "corpus.example.com", Version: "v1", Resource: "specimens"}).
		Namespace(prefix + "-a").Get("full")
	if err != nil {
		t.Fatal(err)
	}
	archive, err := dropLister(schema.GroupVersionResource{Group: "corpus.example.com", Version: "v1", Resource: "archives"}).
		Get(prefix + "-archive")
	if err != nil {
		t.Fatal(err)
	}
	fields := []struct {
		obj  *unstructured.Unstructured
		path []string
		want any // nil: absent
	}{
		{specimen, []string{"spec", "count"}, int64(7)},
		{specimen, []string{"spec", "big"}, int64(9007199254740993)},
		{specimen, []string{"spec", "negative"}, int64(-42)},
		{specimen, []string{"spec", "ratio"}, 1.5},
		{specimen, []string{"spec", "enabled"}, true},
		{specimen, []string{"spec", "disabled"}, false},
		{specimen, []string{"spec", "emptyString"}, ""},
		{specimen, []string{"spec", "port"}, int64(8080)},
		{specimen, []string{"spec", "portName"}, "http"},
		{specimen, []string{"spec", "emptyList"}, []any{}},
		{specimen, []string{"spec", "emptyObject"}, map[string]any{}},
		{specimen, []string{"spec", "free", "aFloat"}, 3.14159},
		{specimen, []string{"spec", "free", "anExponent"}, 6.02e23},
		{specimen, []string{"spec", "free", "aNull"}, nil},
		{specimen, []string{"spec", "free", "anObject", "deep", "deeper", "deepest"}, -0.5},
		// status is a subresource: a create drops it.
		{specimen, []string{"status"}, nil},
		{specimen, []string{"spec", "absent"}, nil},
		{archive, []string{"anything", "here", "maxInt64"}, int64(9223372036854775807)},
		{archive, []string{"anything", "here", "minInt64"}, int64(-9223372036854775808)},
		{archive, []string{"anything", "here", "beyondInt64"}, 1e19},
		{archive, []string{"anything", "here", "zero"}, int64(0)},
	}
	for _, f := range fields {
		got, found, err := unstructured.NestedFieldNoCopy(f.obj.Object, f.path...)
		if err != nil {
			t.Errorf("%s: %v", strings.Join(f.path, "."), err)
			continue
		}
		if !found {
			got = nil
		}
		if diff := cmp.Diff(f.want, got); diff != "" {
			t.Errorf("%s %s (-want +got):\n%s", f.obj.GetName(), strings.Join(f.path, "."), diff)
		}
	}
}

// loadExact is load (fixtures moved to the test's namespaces and labelled)
// with numbers read exactly as the API server reads them: integers as
// int64, whatever their size, others as float64. (fixtures.Load reads YAML
// numbers through float64, which rounds integers beyond 2^53.)
func loadExact(t *testing.T, prefix string, files ...string) []*unstructured.Unstructured {
	t.Helper()
	var objs []*unstructured.Unstructured
	for _, file := range files {
		data, err := os.ReadFile(filepath.Join(testdata, file))
		if err != nil {
			t.Fatal(err)
		}
		reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
		for {
			doc, err := reader.Read()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			jsonDoc, err := utilyaml.ToJSON(doc)
			if err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			if len(bytes.TrimSpace(jsonDoc)) == 0 || string(bytes.TrimSpace(jsonDoc)) == "null" {
				continue
			}
			obj := &unstructured.Unstructured{}
			if err := obj.UnmarshalJSON(jsonDoc); err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			objs = append(objs, obj)
		}
	}
	for _, obj := range objs {
		if ns := obj.GetNamespace(); strings.HasPrefix(ns, "team-") {
			obj.SetNamespace(prefix + strings.TrimPrefix(ns, "team"))
		}
		if obj.GetKind() != "CustomResourceDefinition" {
			objLabels := obj.GetLabels()
			if objLabels == nil {
				objLabels = map[string]string{}
			}
			objLabels[testLabel] = prefix
			obj.SetLabels(objLabels)
		}
	}
	return objs
}

// valueKinds records the Go types of the values in unstructured content.
type valueKinds map[string]bool

func (k valueKinds) add(v any) {
	if v == nil {
		return
	}
	k[fmt.Sprintf("%T", v)] = true
	switch v := v.(type) {
	case map[string]any:
		for _, e := range v {
			k.add(e)
		}
	case []any:
		for _, e := range v {
			k.add(e)
		}
	}
}

// waitForObjects lists until n objects are there (or the test's time is
// up), and returns them sorted by key.
func waitForObjects(t *testing.T, list func(labels.Selector) ([]*unstructured.Unstructured, error), n int) []*unstructured.Unstructured {
	t.Helper()
	ctx := testContext(t)
	for {
		objs, err := list(labels.Everything())
		if err != nil {
			t.Fatal(err)
		}
		if len(objs) >= n {
			slices.SortFunc(objs, func(a, b *unstructured.Unstructured) int { return strings.Compare(keyOf(a), keyOf(b)) })
			return objs
		}
		select {
		case <-ctx.Done():
			t.Fatalf("listed %d objects, want %d", len(objs), n)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// asUnstructured turns what client-go's GenericLister lists into
// *unstructured.Unstructured.
func asUnstructured[T any](objs []T, err error) ([]*unstructured.Unstructured, error) {
	ret := make([]*unstructured.Unstructured, 0, len(objs))
	for _, obj := range objs {
		u, ok := any(obj).(*unstructured.Unstructured)
		if !ok {
			return nil, fmt.Errorf("client-go's lister holds a %T", obj)
		}
		ret = append(ret, u)
	}
	return ret, err
}
