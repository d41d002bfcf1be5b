package encodedsize

import (
	"encoding/json"
	"testing"
)

// BenchmarkJSON: what measuring a realistic Pod's unstructured content
// costs (docs/metrics.md), against encoding it and against the JSON decode
// an unstructured informer makes of it anyway.
func BenchmarkJSON(b *testing.B) {
	data, err := json.Marshal(realisticPod(b))
	if err != nil {
		b.Fatal(err)
	}
	pod := realisticPod(b)
	b.Run("measure=walk", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			JSON(pod)
		}
	})
	b.Run("measure=marshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := json.Marshal(pod); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("decode", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var content map[string]any
			if err := json.Unmarshal(data, &content); err != nil {
				b.Fatal(err)
			}
		}
	})
}
