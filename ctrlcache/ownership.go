package ctrlcache

import (
	"github.com/generic-informers/generic"
)

// Ownership returns which of the informer's objects this replica's
// controllers own now, as generic.Informer.Ownership: under a Lease
// membership (generic.WithMembership in Options.Factory), the range of the
// shard key's hashes no other live replica owns (none while the replica
// joins, leaves, or has stepped down); otherwise every object, never
// changing. Read it through an interface assertion on the cache.Informer
// GetInformer returns (interface{ Ownership() generic.Ownership }), or let
// Owned follow it for a controller.
func (i informer) Ownership() generic.Ownership { return i.v.handle().Ownership() }

// Ownership is that of the namespaces' informers, which share the
// Registry's membership and the kind's shard key: any one of them.
func (i *multiNamespaceInformer) Ownership() generic.Ownership {
	for _, informer := range i.namespaceToInformer {
		if o, ok := informer.(interface{ Ownership() generic.Ownership }); ok {
			return o.Ownership()
		}
	}
	return generic.Ownership{}
}
