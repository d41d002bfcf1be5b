package generic_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic/dynamicinformer"

	"github.com/generic-informers/generic"
	dropin "github.com/generic-informers/generic/unstructured"
)

// TestAcquireRefusesEmptyOrVersionlessResource: Acquire refuses a
// resource without a version or a resource name, the empty one among
// them, with an error naming it, and makes nothing; it made an informer
// whose every request failed.
func TestAcquireRefusesEmptyOrVersionlessResource(t *testing.T) {
	tests := []struct {
		name    string
		gvr     schema.GroupVersionResource
		wantErr string // "" if acquired
	}{
		{name: "the empty resource", gvr: schema.GroupVersionResource{}, wantErr: `schema.GroupVersionResource{Group:"", Version:"", Resource:""}`},
		{name: "no version", gvr: schema.GroupVersionResource{Group: "apps", Resource: "deployments"},
			wantErr: `schema.GroupVersionResource{Group:"apps", Version:"", Resource:"deployments"}`},
		{name: "no resource", gvr: schema.GroupVersionResource{Group: "apps", Version: "v1"},
			wantErr: `schema.GroupVersionResource{Group:"apps", Version:"v1", Resource:""}`},
		{name: "the core group", gvr: configMapsGVR},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			factory := newFactory[*unstructured.Unstructured](generic.DynamicSource(newDynamicClient(t)), nil)
			defer factory.Shutdown()
			_, err := factory.Acquire(tc.gvr)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatal(err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("error = %v, want one naming %s", err, tc.wantErr)
			}
			wantMade := 0
			if tc.wantErr == "" {
				wantMade = 1
			}
			if diff := cmp.Diff(wantMade, len(factory.Statuses())); diff != "" {
				t.Errorf("informers made (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDropInKeepsEmptyResource: the drop-in for dynamicinformer keeps
// client-go's behaviour for the empty resource: ForResource returns an
// informer (whose lists fail), no error and no panic.
func TestDropInKeepsEmptyResource(t *testing.T) {
	tests := []struct {
		name       string
		forEmpty   func() bool // reports whether ForResource returned an informer with a lister
		wantResult bool
	}{
		{name: "client-go dynamicinformer", wantResult: true, forEmpty: func() bool {
			informer := dynamicinformer.NewDynamicSharedInformerFactory(newDynamicClient(t), 0).ForResource(schema.GroupVersionResource{})
			return informer != nil && informer.Informer() != nil && informer.Lister() != nil
		}},
		{name: "drop-in", wantResult: true, forEmpty: func() bool {
			factory := dropin.NewDynamicSharedInformerFactory(newDynamicClient(t), 0)
			defer factory.Shutdown()
			informer := factory.ForResource(schema.GroupVersionResource{})
			return informer != nil && informer.Informer() != nil && informer.Lister() != nil
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.wantResult, tc.forEmpty()); diff != "" {
				t.Errorf("an informer of the empty resource (-want +got):\n%s", diff)
			}
		})
	}
}
