package kwatch

import "time"

// counter counts the events of each resource; one goroutine uses it.
type counter struct {
	resources []*resource
	byVerb    map[string]map[string]int // resource -> type -> count
	// stopping is set once kwatch stops the informers.
	stopping bool
}

func newCounter(resources []*resource) *counter {
	c := &counter{resources: resources, byVerb: map[string]map[string]int{}}
	for _, r := range resources {
		c.byVerb[r.name] = map[string]int{}
	}
	return c
}

func (c *counter) add(e Event) {
	if verbs, ok := c.byVerb[e.Resource]; ok {
		verbs[e.Type]++
	}
}

// summary sums up what the counter saw; states are the informers' states
// at the end of the watch.
func (c *counter) summary(syncTimes map[string]time.Duration, states map[string]string) Summary {
	s := make(Summary, 0, len(c.resources))
	for _, r := range c.resources {
		verbs := c.byVerb[r.name]
		s = append(s, ResourceSummary{
			Resource: r.name,
			Cached:   len(r.informer.GetIndexer().ListKeys()),
			Added:    verbs[Added], Modified: verbs[Modified], Deleted: verbs[Deleted],
			SyncTime: syncTimes[r.name],
			State:    states[r.name],
		})
	}
	return s
}
