package compact

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestRecordsOfEverySize: objects of every size, after a first object of every
// size (which makes the dictionary), decode to what they were made of, and
// their Records' EncodedSize is the length of their protobuf encoding.
func TestRecordsOfEverySize(t *testing.T) {
	sizes := []int{0, 1, 15, 100, 70000, 1 << 20}
	for _, first := range sizes {
		for _, size := range sizes {
			t.Run(fmt.Sprintf("first=%d/size=%d", first, size), func(t *testing.T) {
				codec, err := NewCodec(func() *corev1.ConfigMap { return &corev1.ConfigMap{} }, 0)
				if err != nil {
					t.Fatal(err)
				}
				cm := func(name string, n int) *corev1.ConfigMap {
					return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"p": strings.Repeat("xyz", n/3) + fmt.Sprint(n)}}
				}
				if _, err := codec.Compact(cm("first", first)); err != nil {
					t.Fatal(err)
				}
				want := cm("x", size)
				r, err := codec.Compact(want)
				if err != nil {
					t.Fatal(err)
				}
				got, err := codec.Decode(r)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("(-want +got):\n%s", diff)
				}
				if diff := cmp.Diff(want.Size(), r.EncodedSize()); diff != "" {
					t.Errorf("EncodedSize (-want +got):\n%s", diff)
				}
			})
		}
	}
}

// TestCompactAndDecodeConcurrently: Compact and Decode from many
// goroutines, the first Compacts among them.
func TestCompactAndDecodeConcurrently(t *testing.T) {
	codec, _ := NewCodec(func() *corev1.ConfigMap { return &corev1.ConfigMap{} }, 3)
	var wg sync.WaitGroup
	errs := make(chan string, 100)
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				want := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint(g, "-", i)}, Data: map[string]string{"p": strings.Repeat("a", i*10)}}
				r, err := codec.Compact(want)
				if err != nil {
					errs <- err.Error()
					return
				}
				for range 3 {
					got, err := codec.Decode(r)
					if err != nil {
						errs <- err.Error()
						return
					}
					if diff := cmp.Diff(want, got); diff != "" {
						errs <- diff
						return
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}
