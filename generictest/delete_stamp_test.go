package generictest_test

import (
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/cache"

	"github.com/generic-informers/generic/generictest"
)

// TestDeleteEventResourceVersion: a delete's watch event carries a
// resource version of its own, later than the object's last, as
// kube-apiserver's do, so that an informer's cache never goes back.
func TestDeleteEventResourceVersion(t *testing.T) {
	fake := generictest.New(t, scheme.Scheme)
	cms := generictest.NewInformer[*corev1.ConfigMap](fake)
	deleted := make(chan string, 1)
	if _, err := cms.AddEventHandler(cache.TypedResourceEventHandlerFuncs[*corev1.ConfigMap]{
		DeleteFunc: func(d cache.DeletedObject[*corev1.ConfigMap]) { deleted <- d.OptionalObj.ResourceVersion },
	}); err != nil {
		t.Fatal(err)
	}
	created := fake.Create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "gone"}})
	before := cms.Informer().LastSyncResourceVersion()
	fake.Delete(created)
	eventRV, _ := strconv.Atoi(<-deleted)
	createdRV, _ := strconv.Atoi(created.GetResourceVersion())
	type order struct{ DeleteAfterCreate, CacheForward bool }
	got := order{DeleteAfterCreate: eventRV > createdRV, CacheForward: newerRV(cms.Informer().LastSyncResourceVersion(), before)}
	if diff := cmp.Diff(order{true, true}, got); diff != "" {
		t.Errorf("resource versions (-want +got):\n%s", diff)
	}
}

func newerRV(a, b string) bool {
	x, _ := strconv.Atoi(a)
	y, _ := strconv.Atoi(b)
	return x > y
}
