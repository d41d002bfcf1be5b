package controller

import "k8s.io/client-go/tools/cache"

// PendingWrites returns how many writes of key's reconciles the next
// reconcile of key waits for.
func PendingWrites(c *Controller, key cache.ObjectName) int {
	return len(c.writes.pending(key))
}
