package share

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// BenchmarkDecodePod decodes realistic Pods from protobuf, as a typed
// informer's decoder does, alone and followed by a Sharer's walk: the
// difference is what sharing adds to a typed sync per Pod.
func BenchmarkDecodePod(b *testing.B) {
	fixture := podFixture(b)
	const replicas = 1000
	frames := make([][]byte, replicas)
	for i := range frames {
		data, err := replica(fixture, i).Marshal()
		if err != nil {
			b.Fatal(err)
		}
		frames[i] = data
	}
	cases := []struct {
		name   string
		sharer *Sharer
	}{
		{"decode", nil},
		{"decode+share", New(true)},
		{"decode+share-strings-only", New(false)},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				pod := &corev1.Pod{}
				if err := pod.Unmarshal(frames[i%replicas]); err != nil {
					b.Fatal(err)
				}
				c.sharer.Object(pod)
				i++
			}
		})
	}
}
