package controller

import (
	"k8s.io/client-go/tools/cache"

	"github.com/generic-informers/generic/internal/idle"
)

// PendingWrites returns how many writes of key's reconciles the next
// reconcile of key waits for.
func PendingWrites(c *Controller, key cache.ObjectName) int {
	return len(c.writes.pending(key))
}

// IdleReport is what generictest's WaitIdle sees of c.
func IdleReport(c *Controller) idle.Report { return c.idleReport() }

// Records returns how many keys c holds a record of (keystate.go).
func Records(c *Controller) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.keys)
}
