package membership

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	coordinationclient "k8s.io/client-go/kubernetes/typed/coordination/v1"
)

// What a replica's Lease holds of the protocol: the group label that
// selects the Leases of one controller's replicas, and its Announcement in
// annotations.
const (
	GroupLabel        = "sharding.generic-informers.io/group"
	viewAnnotation    = "sharding.generic-informers.io/view"
	phaseAnnotation   = "sharding.generic-informers.io/phase"
	leavingAnnotation = "sharding.generic-informers.io/leaving"
)

// leases reads and writes the Leases of a group in one namespace: the
// replica's own, and the others'. Which Leases are live is told as
// client-go's leader election tells it, by the local time at which a
// Lease was last seen to change (versionOf), not by the
// renewTime another replica's clock wrote: clocks may differ.
type leases struct {
	// mu serializes the runner's renewals and its reads.
	mu       sync.Mutex
	client   coordinationclient.LeaseInterface
	group    string
	identity string
	duration time.Duration
	now      func() time.Time
	// seen is, for each Lease name, its version when last read
	// (versionOf) and the local time it was first read so.
	seen map[string]observation
	// own is the replica's own Lease as last written, nil before the
	// first write or after a release.
	own *coordinationv1.Lease
}

type observation struct {
	version string
	since   time.Time
}

// versionOf is what changes when a Lease is renewed: its resourceVersion
// and its renewTime (a fake client's tracker may keep the former).
func versionOf(lease *coordinationv1.Lease) string {
	renewed := ""
	if t := lease.Spec.RenewTime; t != nil {
		renewed = t.UTC().Format(time.RFC3339Nano)
	}
	return lease.ResourceVersion + "/" + renewed
}

// renew writes the replica's own Lease, renewed now and saying
// announced: it creates it if it does not exist (or was released).
func (l *leases) renew(ctx context.Context, announced Announcement) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := metav1.NewMicroTime(l.now())
	if l.own == nil {
		existing, err := l.client.Get(ctx, l.identity, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			created, err := l.client.Create(ctx, l.newLease(now, announced), metav1.CreateOptions{})
			if err != nil {
				return fmt.Errorf("membership: creating Lease %s: %w", l.identity, err)
			}
			l.own = created
			return nil
		case err != nil:
			return fmt.Errorf("membership: reading Lease %s: %w", l.identity, err)
		}
		l.own = existing
	}
	lease := l.own.DeepCopy()
	l.write(lease, now, announced)
	updated, err := l.client.Update(ctx, lease, metav1.UpdateOptions{})
	if err != nil {
		// Read again next time: another writer (a replica of the same
		// identity, or one that released it) may have changed it.
		l.own = nil
		return fmt.Errorf("membership: renewing Lease %s: %w", l.identity, err)
	}
	l.own = updated
	return nil
}

func (l *leases) newLease(now metav1.MicroTime, announced Announcement) *coordinationv1.Lease {
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: l.identity, Labels: map[string]string{GroupLabel: l.group}}}
	lease.Spec.AcquireTime = &now
	l.write(lease, now, announced)
	return lease
}

// write sets lease's holder, duration, renewTime and announcement.
func (l *leases) write(lease *coordinationv1.Lease, now metav1.MicroTime, announced Announcement) {
	seconds := int32(l.duration / time.Second)
	lease.Spec.HolderIdentity = &l.identity
	lease.Spec.LeaseDurationSeconds = &seconds
	lease.Spec.RenewTime = &now
	if lease.Labels == nil {
		lease.Labels = map[string]string{}
	}
	lease.Labels[GroupLabel] = l.group
	if lease.Annotations == nil {
		lease.Annotations = map[string]string{}
	}
	lease.Annotations[viewAnnotation] = announced.View
	lease.Annotations[phaseAnnotation] = string(announced.Phase)
	lease.Annotations[leavingAnnotation] = strconv.FormatBool(announced.Leaving)
}

// release deletes the replica's own Lease.
func (l *leases) release(ctx context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.own = nil
	err := l.client.Delete(ctx, l.identity, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("membership: releasing Lease %s: %w", l.identity, err)
	}
	return nil
}

// expiredLease is the Lease of another replica that was not seen to
// change for its duration, and its resourceVersion when read so.
type expiredLease struct {
	name, resourceVersion string
}

// others lists the group's Leases from the API server (a consistent read,
// see Action.NeedsConsistentRead) and returns those of other replicas that
// are live: each changed within the Lease duration of its own (or, for
// one never seen to change, of when it was first read); and those that
// are not, expired.
func (l *leases) others(ctx context.Context) ([]Member, []expiredLease, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	list, err := l.client.List(ctx, metav1.ListOptions{LabelSelector: labels.SelectorFromSet(labels.Set{GroupLabel: l.group}).String()})
	if err != nil {
		return nil, nil, fmt.Errorf("membership: listing the Leases of group %s: %w", l.group, err)
	}
	now := l.now()
	present := map[string]bool{}
	var members []Member
	var expired []expiredLease
	for i := range list.Items {
		lease := &list.Items[i]
		name := lease.Name
		present[name] = true
		if name == l.identity {
			continue
		}
		version := versionOf(lease)
		seen, ok := l.seen[name]
		if !ok || seen.version != version {
			seen = observation{version: version, since: now}
			l.seen[name] = seen
		}
		if now.Sub(seen.since) < durationOf(lease, l.duration) {
			members = append(members, Member{Identity: name, Announcement: announcementOf(lease)})
		} else {
			expired = append(expired, expiredLease{name: name, resourceVersion: lease.ResourceVersion})
		}
	}
	for name := range l.seen {
		if !present[name] {
			delete(l.seen, name)
		}
	}
	return members, expired, nil
}

// deleteExpired deletes the expired Lease of another replica, only if its
// resourceVersion is still the one read (a Conflict error otherwise).
func (l *leases) deleteExpired(ctx context.Context, e expiredLease) error {
	rv := e.resourceVersion
	if err := l.client.Delete(ctx, e.name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: &rv}}); err != nil {
		return fmt.Errorf("membership: deleting the expired Lease %s: %w", e.name, err)
	}
	return nil
}

// durationOf is the duration lease says it is held for, or fallback.
func durationOf(lease *coordinationv1.Lease, fallback time.Duration) time.Duration {
	if s := lease.Spec.LeaseDurationSeconds; s != nil && *s > 0 {
		return time.Duration(*s) * time.Second
	}
	return fallback
}

func announcementOf(lease *coordinationv1.Lease) Announcement {
	leaving, _ := strconv.ParseBool(lease.Annotations[leavingAnnotation])
	return Announcement{View: lease.Annotations[viewAnnotation], Phase: Phase(lease.Annotations[phaseAnnotation]), Leaving: leaving}
}
