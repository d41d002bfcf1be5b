package genericprometheus

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/generic-informers/generic"
)

// membershipLabels are the labels of every membership metric.
var membershipLabels = []string{"group", "identity"}

// memberships are the membership metrics: gauges read from each
// membership's status at scrape time.
type memberships struct {
	members, index, count, owns, steppedDown, lastReshard *prometheus.Desc

	mu       sync.Mutex
	statuses map[*func() generic.MembershipStatus]struct{}
}

func newMemberships() *memberships {
	name := func(n string) string { return prometheus.BuildFQName(Namespace, "membership", n) }
	desc := func(n, help string) *prometheus.Desc { return prometheus.NewDesc(name(n), help, membershipLabels, nil) }
	return &memberships{
		members:     desc("members", "Live replicas of the group in the membership the replica moves to."),
		index:       desc("shard_index", "The replica's shard index in that membership."),
		count:       desc("shard_count", "The count of shards of that membership."),
		owns:        desc("owns", "1 if the replica's controllers own its whole shard, else 0."),
		steppedDown: desc("stepped_down", "1 if the replica owns nothing because it could not renew its Lease, else 0."),
		lastReshard: desc("last_reshard_timestamp_seconds", "Unix time the replica last narrowed to a new membership; 0 if never."),
		statuses:    map[*func() generic.MembershipStatus]struct{}{},
	}
}

// NewMembershipMetrics implements generic.MembershipMetricsProvider: the
// membership's gauges, with the labels group and identity, are read from
// status at each scrape, until remove.
//
//	generic_membership_members                         gauge  live replicas of the membership it moves to
//	generic_membership_shard_index                     gauge  its shard's index in it
//	generic_membership_shard_count                     gauge  the count of shards
//	generic_membership_owns                            gauge  1 if it owns its whole shard
//	generic_membership_stepped_down                    gauge  1 if it owns nothing, its Lease not renewed
//	generic_membership_last_reshard_timestamp_seconds  gauge  Unix time of its last reshard; 0 if never
func (m *Metrics) NewMembershipMetrics(_, _ string, status func() generic.MembershipStatus) (remove func()) {
	key := &status
	m.memberships.mu.Lock()
	defer m.memberships.mu.Unlock()
	m.memberships.statuses[key] = struct{}{}
	return func() {
		m.memberships.mu.Lock()
		defer m.memberships.mu.Unlock()
		delete(m.memberships.statuses, key)
	}
}

func (s *memberships) describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{s.members, s.index, s.count, s.owns, s.steppedDown, s.lastReshard} {
		ch <- d
	}
}

func (s *memberships) collect(ch chan<- prometheus.Metric) {
	s.mu.Lock()
	statuses := make([]func() generic.MembershipStatus, 0, len(s.statuses))
	for status := range s.statuses {
		statuses = append(statuses, *status)
	}
	s.mu.Unlock()
	for _, read := range statuses {
		status := read()
		labels := []string{status.Group, status.Identity}
		lastReshard := 0.0
		if !status.LastReshard.IsZero() {
			lastReshard = float64(status.LastReshard.UnixNano()) / 1e9
		}
		for desc, v := range map[*prometheus.Desc]float64{
			s.members: float64(len(status.Members)), s.index: float64(status.Shard.Index), s.count: float64(status.Shard.Count),
			s.owns: boolGauge(status.Owns), s.steppedDown: boolGauge(status.SteppedDown), s.lastReshard: lastReshard,
		} {
			ch <- prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, v, labels...)
		}
	}
}

func boolGauge(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
