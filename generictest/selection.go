package generictest

import (
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/generic-informers/generic/internal/shardcheck"
)

// selection is what one list or watch request selects (namespace, label,
// field and shard selectors).
//
// The Fake serves as an API server without the ShardedListAndWatch feature
// gate (as client-go's fake client, which drops a list's shardInfo): it
// sends the objects of the namespace, labels and fields (served), and the
// informer keeps those of its shard itself (holds).
type selection struct{ shardcheck.Request }

// everything selects every object of every namespace.
func everything() selection { return selection{shardcheck.Everything()} }

// selectionOf reads the selection of a request in namespace ("" for all)
// made with opts; a selector the server would refuse is an error.
func selectionOf(namespace string, opts metav1.ListOptions) (selection, error) {
	r, err := shardcheck.ParseRequest(namespace, opts)
	return selection{r}, err
}

// checkSelectors returns a 400 Bad Request for options whose selectors the
// server would refuse: client-go's fake client panics on them.
func checkSelectors(opts metav1.ListOptions) error {
	if _, err := selectionOf("", opts); err != nil {
		return apierrors.NewBadRequest(err.Error())
	}
	return nil
}

// served reports whether the Fake sends obj to a request of s.
func (s selection) served(obj runtime.Object) bool { return s.Matches(obj) }

// holds reports whether an informer whose requests select s keeps obj:
// served to it, and in its shard.
func (s selection) holds(obj runtime.Object) bool { return s.Matches(obj) && s.InShard(obj) }

// informerRequests is what the Fake learns of one informer of its factory
// from the requests it makes: the selection of the last one. Changes wait
// for the handlers of an informer only for the objects it holds, and the
// Fake waits for the watch of each informer.
type informerRequests struct {
	mu   sync.Mutex
	last selection
	made bool
}

// record notes a request of the informer.
func (r *informerRequests) record(namespace string, opts metav1.ListOptions) {
	s, err := selectionOf(namespace, opts)
	if err != nil {
		return // refused by the Fake too: nothing is served to it
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.last, r.made = s, true
}

// selection returns the selection of the informer's last request; before
// any, every object.
func (r *informerRequests) selection() selection {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.made {
		return everything()
	}
	return r.last
}
