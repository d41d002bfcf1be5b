package typed

import (
	"context"
	"fmt"
	"math"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/generic-informers/generic"
)

// A Factory tells its informers that wait for their resource (NotServed:
// a kind whose CRD is not installed yet, see unserved_kind.go) when the
// server may have begun to serve it: it is the Registry's
// generic.ServedWatch, which the Registry runs only while an informer is
// NotServed. It keeps one watch of CustomResourceDefinitions, metadata
// only, through the metadata client (Clients.Metadata, or one made from
// Clients.Config; a Factory with neither watches none), and each CRD created or changed (its NamesAccepted and Established
// conditions set, among others) makes the NotServed informers ask the
// server at once, so that they sync within about a second of the CRD being
// Established instead of at their probe backoff's next time (up to 30 s).
// Without list and watch of customresourcedefinitions (RBAC), or a server
// that does not serve them, it logs once, tries again with backoff up to
// 5 minutes, and the informers rely on their own probes.

// crdResource is the resource of CustomResourceDefinitions.
var crdResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// Backoff of the CRD watch after a failure: 1 s doubling to 5 minutes; and
// the pause before it watches again after a watch ended without error.
const (
	crdWatchRetryInitial = time.Second
	crdWatchRetryMax     = 5 * time.Minute
	crdWatchReopen       = time.Second
)

// watchServed is the Factory's generic.ServedWatch. A client that panics
// (client-go's fake dynamic client does, on a resource it was not told of)
// ends the watch, logged: the informers rely on their probes.
func (f *Factory) watchServed(ctx context.Context, changed func()) {
	logger := klog.FromContext(ctx)
	defer func() {
		if r := recover(); r != nil {
			logger.Info("The watch of CustomResourceDefinitions panicked; informers of kinds not served yet rely on their probes", "panic", fmt.Sprint(r))
		}
	}()
	lw, err := f.crdListerWatcher()
	if err != nil {
		logger.V(2).Info("No watch of CustomResourceDefinitions: informers of kinds not served yet rely on their probes", "err", err.Error())
		return
	}
	watchCRDs(ctx, lw, changed)
}

// crdListerWatcher lists and watches CustomResourceDefinitions through the
// metadata client (Clients.Metadata, or one made from Clients.Config).
func (f *Factory) crdListerWatcher() (cache.ListerWatcherWithContext, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	client, err := f.metadataClient()
	if err != nil {
		return nil, err
	}
	return cache.ToListerWatcherWithContext(generic.MetadataSource(client)(crdResource, metav1.NamespaceAll, nil)), nil
}

// watchCRDs watches CustomResourceDefinitions through lw until ctx ends,
// and calls changed once each watch is open (what changed before it) and
// at every CRD created or changed.
func watchCRDs(ctx context.Context, lw cache.ListerWatcherWithContext, changed func()) {
	logger := klog.FromContext(ctx)
	retry := crdWatchBackoff()
	lastFailure := ""
	for {
		err := watchCRDsOnce(ctx, lw, changed)
		if ctx.Err() != nil {
			return
		}
		delay := crdWatchReopen
		if err != nil {
			delay = retry.Step()
			if message := err.Error(); message != lastFailure {
				lastFailure = message
				logger.Info("Cannot watch CustomResourceDefinitions; informers of kinds not served yet notice a CRD installed later by their probes only (up to 30 s later)", "err", message, "retryIn", delay)
			}
		} else {
			retry, lastFailure = crdWatchBackoff(), ""
		}
		if !sleep(ctx, delay) {
			return
		}
	}
}

func crdWatchBackoff() wait.Backoff {
	return wait.Backoff{Duration: crdWatchRetryInitial, Factor: 2, Steps: math.MaxInt32, Cap: crdWatchRetryMax}
}

// watchCRDsOnce opens a watch of CustomResourceDefinitions from now (the
// resourceVersion of a list of one), calls changed, and then again at
// each CRD created or changed, until the watch ends: nil if it ended
// without error, or with 410 Gone.
func watchCRDsOnce(ctx context.Context, lw cache.ListerWatcherWithContext, changed func()) error {
	list, err := lw.ListWithContext(ctx, metav1.ListOptions{Limit: 1})
	if err != nil {
		return err
	}
	listMeta, err := meta.ListAccessor(list)
	if err != nil {
		return err
	}
	w, err := lw.WatchWithContext(ctx, metav1.ListOptions{ResourceVersion: listMeta.GetResourceVersion(), AllowWatchBookmarks: true})
	if err != nil {
		return err
	}
	defer w.Stop()
	changed()
	for {
		select {
		case <-ctx.Done():
			return nil
		case e, ok := <-w.ResultChan():
			if !ok {
				return nil
			}
			switch e.Type {
			case watch.Added, watch.Modified:
				changed()
			case watch.Error:
				if err := apierrors.FromObject(e.Object); !apierrors.IsResourceExpired(err) && !apierrors.IsGone(err) {
					return err
				}
				return nil
			}
		}
	}
}

// sleep waits for d or until ctx ends; false if ctx ended.
func sleep(ctx context.Context, d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-ctx.Done():
		return false
	}
}
