package kwatch

import (
	"time"

	"k8s.io/client-go/tools/cache"

	"github.com/generic-informers/generic"
)

// Event is one change a handler saw, as kwatch prints it.
type Event struct {
	Time            time.Time `json:"time"`
	Type            string    `json:"type"`
	Resource        string    `json:"resource"`
	Namespace       string    `json:"namespace,omitempty"`
	Name            string    `json:"name"`
	ResourceVersion string    `json:"resourceVersion,omitempty"`
	// Tombstone is set on a delete the informer did not see happen: a
	// relist found the object gone.
	Tombstone bool `json:"tombstone,omitempty"`
	// State is the informer's new state, on a STATE event (Name is empty).
	State string `json:"state,omitempty"`
	// Error is the informer's last error, on a STATE event.
	Error string `json:"error,omitempty"`
}

// Event types.
const (
	Added    = "ADDED"
	Modified = "MODIFIED"
	Deleted  = "DELETED"
	// StateChanged is an informer's change of state (generic.State).
	StateChanged = "STATE"
)

// stateEvent is the Event of a change of an informer's state.
func stateEvent(status generic.Status) Event {
	e := Event{Time: time.Now(), Type: StateChanged, Resource: status.GVR.GroupResource().String(), State: status.State.String()}
	if status.LastError != nil {
		e.Error = status.LastError.Error()
	}
	return e
}

// Key is namespace/name, or name for a cluster-scoped object.
func (e Event) Key() string {
	if e.Namespace == "" {
		return e.Name
	}
	return e.Namespace + "/" + e.Name
}

// sendEvents registers a typed handler on informer that sends every change
// after the initial list to events, labelled with resource.
func sendEvents[T generic.Object](informer generic.Informer[T], resource string, events chan<- Event) error {
	newEvent := func(eventType string, obj T) Event {
		return Event{
			Time: time.Now(), Type: eventType, Resource: resource,
			Namespace: obj.GetNamespace(), Name: obj.GetName(), ResourceVersion: obj.GetResourceVersion(),
		}
	}
	_, err := informer.AddEventHandler(cache.TypedResourceEventHandlerDetailedFuncs[T]{
		AddFunc: func(obj T, isInInitialList bool) {
			if !isInInitialList {
				events <- newEvent(Added, obj)
			}
		},
		UpdateFunc: func(_, obj T) { events <- newEvent(Modified, obj) },
		DeleteFunc: func(deleted cache.DeletedObject[T]) {
			var zero T
			e := Event{Time: time.Now(), Type: Deleted, Resource: resource,
				Namespace: deleted.GetNamespace(), Name: deleted.GetName(), Tombstone: deleted.FinalStateUnknown != nil}
			if deleted.OptionalObj != zero {
				e.ResourceVersion = deleted.OptionalObj.GetResourceVersion()
			}
			events <- e
		},
	})
	return err
}
