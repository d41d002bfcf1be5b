// Package writes carries, in a context, where a client reports the writes
// it made: the typed write client reports each write it makes with a
// context that carries a Recorder, and the controller loop hands each
// reconcile such a context, so that it knows what a reconcile wrote before
// the next reconcile of the same key reads its caches (KEP-5647's
// ConsistencyStore.WroteAt). It imports no other package of this module.
package writes

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Write is one write the server acknowledged.
type Write struct {
	// Resource is the written object's resource.
	Resource schema.GroupVersionResource
	// Namespace and Name name the object.
	Namespace, Name string
	// UID is the object's UID, if known ("" after a delete without a UID
	// precondition).
	UID string
	// ResourceVersion is that of the server's answer; "" after a delete,
	// whose answer client-go drops.
	ResourceVersion string
	// Labels are the object's labels as written (nil after a delete).
	Labels map[string]string
	// Deleted is true for a delete.
	Deleted bool
}

// Recorder is told of each write. It must be safe for concurrent use.
type Recorder interface {
	Record(Write)
}

type recorderKey struct{}

// WithRecorder returns a context that carries r.
func WithRecorder(ctx context.Context, r Recorder) context.Context {
	return context.WithValue(ctx, recorderKey{}, r)
}

// Record tells the Recorder ctx carries, if any, of w.
func Record(ctx context.Context, w Write) {
	if r, ok := ctx.Value(recorderKey{}).(Recorder); ok && r != nil {
		r.Record(w)
	}
}
