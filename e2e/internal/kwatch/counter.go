package kwatch

import "time"

// counter counts the events of each resource; one goroutine uses it.
type counter struct {
	resources []*resource
	byVerb    map[string]map[string]int // resource -> type -> count
}

func newCounter(resources []*resource) *counter {
	c := &counter{resources: resources, byVerb: map[string]map[string]int{}}
	for _, r := range resources {
		c.byVerb[r.name] = map[string]int{}
	}
	return c
}

func (c *counter) add(e Event) { c.byVerb[e.Resource][e.Type]++ }

func (c *counter) summary(syncTimes map[string]time.Duration) Summary {
	s := make(Summary, 0, len(c.resources))
	for _, r := range c.resources {
		verbs := c.byVerb[r.name]
		s = append(s, ResourceSummary{
			Resource: r.name,
			Cached:   len(r.informer.GetIndexer().ListKeys()),
			Added:    verbs[Added], Modified: verbs[Modified], Deleted: verbs[Deleted],
			SyncTime: syncTimes[r.name],
		})
	}
	return s
}
