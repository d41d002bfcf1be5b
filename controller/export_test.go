package controller

import (
	"k8s.io/client-go/tools/cache"
)

// PendingWrites returns how many writes of key's reconciles the next
// reconcile of key waits for.
func PendingWrites(c *Controller, key cache.ObjectName) int {
	return len(c.writes.pending(key))
}

// KeysReport is what c's Idle says of its keys, without its informers.
func KeysReport(c *Controller) IdleReport { return c.keysReport() }

// Records returns how many keys c holds a record of (keystate.go).
func Records(c *Controller) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.keys)
}
