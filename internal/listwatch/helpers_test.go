package listwatch

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/sharding"
	"k8s.io/client-go/tools/cache"
)

// noMeter measures nothing.
type noMeter struct{}

func (noMeter) Request(bool)                               {}
func (noMeter) RequestFailed(context.Context, bool, error) {}
func (noMeter) ReceivingInitialList() bool                 { return false }
func (noMeter) Received(context.Context, int)              {}
func (noMeter) Events(int, int, int, int)                  {}
func (noMeter) CountsEvents() bool                         { return false }
func (noMeter) CompleteList()                              {}
func (noMeter) Arrival() time.Duration                     { return 0 }
func (noMeter) Stamp(any, time.Duration)                   {}

// served records the Served hooks called, in order.
type served struct {
	mu    sync.Mutex
	calls []string
}

func (s *served) record(call string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, call)
}

func (s *served) Listed()              { s.record("Listed") }
func (s *served) NotServed(error)      { s.record("NotServed") }
func (s *served) StoppedForGood(error) { s.record("StoppedForGood") }
func (s *served) Forbidden(error)      { s.record("Forbidden") }
func (s *served) Failed(err error)     { s.record("Failed") }

// unchanged is ServedChanged of resources served that never change.
func unchanged() <-chan struct{} { return nil }

// everything is the selection of every object, never changing.
func everything() (sharding.Selector, uint64, <-chan struct{}) { return nil, 0, nil }

var errUnexpectedType = errors.New("unexpected object type")

// identity is the converter of a source that delivers T.
func identity[T Object](obj runtime.Object) (T, error) {
	if t, ok := obj.(T); ok {
		return t, nil
	}
	var zero T
	return zero, fmt.Errorf("%w: got %T", errUnexpectedType, obj)
}

// testChain returns the chain of T over lw, with no metrics, every object
// selected, and rejections dropped.
func testChain[T Object](lw cache.ListerWatcher) *Chain[T] {
	return New(lw, Config[T]{
		GVR:            schema.GroupVersionResource{Resource: "things"},
		Convert:        identity[T],
		UnexpectedType: errUnexpectedType,
	}, Hooks{
		Reject:        func(context.Context, string, error) {},
		Served:        &served{},
		Meter:         noMeter{},
		Selection:     everything,
		ServedChanged: unchanged,
	})
}
