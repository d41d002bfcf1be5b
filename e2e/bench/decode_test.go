package bench

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	apiruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/kubernetes"
)

// BenchmarkDecodeList decodes one recorded list response of the sync
// benchmark's ConfigMaps (`objects` of them, about 2 KiB each), client
// side only: the embedded server's own work is out of the measure, which
// the sync benchmark cannot separate. One op is the whole list:
//
//   - unstructured-json: what the dynamic client does (client-go's dynamic
//     informer and this library's unstructured one):
//     unstructured.UnstructuredJSONScheme into an UnstructuredList;
//   - typed-json: a typed client on JSON (a CRD's Go type);
//   - typed-protobuf: a typed client on protobuf (the built-in informers);
//   - protobuf-then-unstructured: issue 12's candidate for built-in kinds,
//     protobuf into typed objects, then each converted once
//     (runtime.DefaultUnstructuredConverter.ToUnstructured).
//
// It says how much of the unstructured sync's cost is decoding, and what
// the protobuf candidate would save:
//
//	go -C e2e test ./bench -run '^$' -bench DecodeList -benchmem
func BenchmarkDecodeList(b *testing.B) {
	config, _ := seededServer(b)
	client := kubernetes.NewForConfigOrDie(config).CoreV1().RESTClient()
	record := func(accept string) []byte {
		data, err := client.Get().Resource("configmaps").SetHeader("Accept", accept).DoRaw(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		return data
	}
	jsonList, protoList := record("application/json"), record("application/vnd.kubernetes.protobuf")
	// The universal deserializer tells JSON from protobuf by their bytes.
	typedDecoder := serializer.NewCodecFactory(scheme).UniversalDeserializer()
	contenders := []struct {
		name   string
		decode func() (int, error)
	}{
		{"unstructured-json", func() (int, error) {
			list := &unstructured.UnstructuredList{}
			_, _, err := unstructured.UnstructuredJSONScheme.Decode(jsonList, nil, list)
			return len(list.Items), err
		}},
		{"typed-json", func() (int, error) {
			list := &corev1.ConfigMapList{}
			_, _, err := typedDecoder.Decode(jsonList, nil, list)
			return len(list.Items), err
		}},
		{"typed-protobuf", func() (int, error) {
			list := &corev1.ConfigMapList{}
			_, _, err := typedDecoder.Decode(protoList, nil, list)
			return len(list.Items), err
		}},
		{"protobuf-then-unstructured", func() (int, error) {
			list := &corev1.ConfigMapList{}
			if _, _, err := typedDecoder.Decode(protoList, nil, list); err != nil {
				return 0, err
			}
			items := make([]unstructured.Unstructured, len(list.Items))
			for i := range list.Items {
				content, err := apiruntime.DefaultUnstructuredConverter.ToUnstructured(&list.Items[i])
				if err != nil {
					return 0, err
				}
				items[i].Object = content
				items[i].SetAPIVersion("v1")
				items[i].SetKind("ConfigMap")
			}
			return len(items), nil
		}},
	}
	for _, c := range contenders {
		b.Run("contender="+c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(jsonList)))
			for b.Loop() {
				n, err := c.decode()
				if err != nil {
					b.Fatal(err)
				}
				if n < objects {
					b.Fatalf("decoded %d objects, want at least %d", n, objects)
				}
			}
		})
	}
}
