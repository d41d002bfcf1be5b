package controller

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	"github.com/generic-informers/generic/internal/writes"
)

// TestWriteLog: which writes the next reconcile of a key waits for.
func TestWriteLog(t *testing.T) {
	cms := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	write := func(name, uid, rv string) writes.Write {
		return writes.Write{Resource: cms, Namespace: "ns", Name: name, UID: uid, ResourceVersion: rv}
	}
	deleted := func(name, uid string) writes.Write {
		return writes.Write{Resource: cms, Namespace: "ns", Name: name, UID: uid, Deleted: true}
	}
	tests := []struct {
		name   string
		cached map[string]string // UIDs in the caches, by name
		record []writes.Write
		want   []writes.Write
	}{{
		name:   "the latest write of an object",
		record: []writes.Write{write("a", "u1", "10"), write("a", "u1", "11")},
		want:   []writes.Write{write("a", "u1", "11")},
	}, {
		name:   "a create then a delete: both, the delete with the create's UID",
		record: []writes.Write{write("a", "u1", "10"), deleted("a", "")},
		want:   []writes.Write{write("a", "u1", "10"), deleted("a", "u1")},
	}, {
		name:   "a delete alone takes the UID from the caches",
		cached: map[string]string{"a": "u9"},
		record: []writes.Write{deleted("a", "")},
		want:   []writes.Write{deleted("a", "u9")},
	}, {
		name:   "a delete with a UID precondition keeps it",
		cached: map[string]string{"a": "u9"},
		record: []writes.Write{deleted("a", "u2")},
		want:   []writes.Write{deleted("a", "u2")},
	}, {
		name:   "a write after a delete replaces both",
		record: []writes.Write{write("a", "u1", "10"), deleted("a", ""), write("a", "u3", "12")},
		want:   []writes.Write{write("a", "u3", "12")},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			log := newWriteLog(func(w writes.Write) string { return tc.cached[w.Name] }, nil)
			key := cache.ObjectName{Namespace: "ns", Name: "primary"}
			rec := log.recorderFor(key)
			for _, w := range tc.record {
				rec.Record(w)
			}
			got := log.pending(key)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("pending (-want +got):\n%s", diff)
			}
			log.clear(key, got)
			if diff := cmp.Diff([]writes.Write(nil), log.pending(key)); diff != "" {
				t.Errorf("pending after clear (-want +got):\n%s", diff)
			}
		})
	}
}
