package compact

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// BenchmarkReadMiss compares one protobuf decode of a realistic Pod with a
// read of its Record that finds it not decoded (the Codec keeps none):
// decompression, decode, and the TypeMeta set.
func BenchmarkReadMiss(b *testing.B) {
	const pods = 10000
	codec, err := NewCodec(newPod, 1000)
	if err != nil {
		b.Fatal(err)
	}
	var encoded [][]byte
	var records []*Record
	for i := range pods {
		pod := realisticPod(b, i)
		pod.Labels["app"] = fmt.Sprint("app-", i%200)
		pod.Spec.Containers[0].Image = fmt.Sprintf("registry.example/app-%d:v%d", i%200, i%7)
		data, err := pod.Marshal()
		if err != nil {
			b.Fatal(err)
		}
		r, err := codec.Compact(pod)
		if err != nil {
			b.Fatal(err)
		}
		encoded, records = append(encoded, data), append(records, r)
	}
	b.Run("protobuf-decode", func(b *testing.B) {
		i := 0
		for b.Loop() {
			if err := (&corev1.Pod{}).Unmarshal(encoded[i%pods]); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
	b.Run("read-miss", func(b *testing.B) {
		i := 0
		for b.Loop() {
			if _, err := codec.Decode(records[i%pods]); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
}
