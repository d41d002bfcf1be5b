package generic

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/validate/content"
	coordinationclient "k8s.io/client-go/kubernetes/typed/coordination/v1"

	"github.com/generic-informers/generic/internal/membership"
)

// Membership is how the replicas of one controller divide its resources'
// objects among themselves, with no StatefulSet and no coordinator: each
// replica holds a Lease of its own (coordination.k8s.io/v1, the API
// client-go's leader election uses) in one namespace, renewed every
// RetryPeriod; the live Leases of the Group, ordered by Identity, give
// each replica its index and the count, and so its Shard. When they change
// (a replica joins, leaves, or its Lease expires), the replicas reshard
// among themselves in the two steps of BeginReshard and Reshard, each
// saying in its Lease how far it has gone, so that no object is in no
// replica's cache once the membership has settled; and what a replica's
// controllers own (Ownership) changes only once no other replica can own
// the same objects. See docs/sharding.md for the protocol and its timing
// bounds.
type Membership struct {
	// Leases reads and writes the Leases of the namespace the group's
	// Leases live in: clientset.CoordinationV1().Leases(namespace).
	Leases coordinationclient.LeaseInterface
	// Group names the replicas that divide the objects: every replica of
	// one controller gives the same (its Deployment's name, say). The
	// Leases carry it in the label sharding.generic-informers.io/group.
	Group string
	// Identity is this replica's, unique in its Group and stable for its
	// life: its Lease's name, a DNS subdomain (a Pod's name, from the
	// downward API).
	Identity string
	// LeaseDuration is how long the others wait, from the last change of
	// a replica's Lease they saw, before they take it for gone and take
	// its shard (default 15 s); once they hold it, they delete its Lease. RenewDeadline is how long a replica that
	// cannot renew its Lease keeps owning its objects (default 10 s):
	// shorter than LeaseDuration, so that it owns nothing before another
	// can take its shard, on clocks that run at about the same rate.
	// RetryPeriod is how often a replica renews its Lease and reads the
	// others' (default 2 s). They are client-go leader election's
	// defaults, and must keep RetryPeriod < RenewDeadline < LeaseDuration.
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
	// LeaveTimeout bounds a clean leave (default LeaseDuration): when the
	// factory's Start context ends or Shutdown is called, the replica
	// owns nothing, says in its Lease that it leaves, and keeps its
	// informers running until the others hold its objects or LeaveTimeout
	// has passed, then releases its Lease.
	LeaveTimeout time.Duration
}

// Member is this replica's place in the group of a Membership: made
// once, by NewMember, and given to every Registry that moves with it
// (WithMembership), so that several registries of one process share one
// Lease and one shard. It is an explicit value, not a side effect of an
// option: an option is a plain value. A Member joins its group at the
// first Start of a Registry given it, and leaves once (Shutdown of one of
// them, or the end of that Start's context); it does not join again.
type Member struct {
	member *member
}

// NewMember returns the Member of m, after checking m: a Membership that
// is not valid (no Leases client, Group or Identity, an Identity that is
// not a DNS subdomain, timings out of order) is an error naming the
// field. It talks to no server: the Member joins at Start.
func NewMember(m Membership) (*Member, error) {
	mem, err := newMember(m)
	if err != nil {
		return nil, err
	}
	return &Member{member: mem}, nil
}

// WithMembership makes a Registry's replicas divide its objects through
// their Leases (see Membership): its informers hold the shard the live
// replicas give this one, and move with it. It is a FactoryOption only,
// so that giving it to one informer does not compile; with WithShard, or a
// nil Member, it is an error where the registry is made. Every Registry
// given the same Member moves with it: make it once (NewMember).
//
// A Registry with a membership starts its informers only once the
// membership has given the replica its shard, so that a replica that
// joins never lists every object: its Start joins the group, its
// WaitForCacheSync waits for the shard first.
//
// A replica that leaves (Shutdown, or the end of Start's context) owns
// nothing from the start of its leave on: its Membership says Leaving, Owns
// false and Owned "none" then and after it has left, as its membership
// metrics do until they are removed. A replica that dies without leaving
// (killed, cut off) leaves its Lease behind: the others take its shard once
// it has expired (LeaseDuration), then delete it, on the condition that it
// was not renewed since they read it, so that the group's Leases do not grow
// with every crash and a replica that joins later does not count a dead one
// live for a LeaseDuration before it settles.
func WithMembership(m *Member) FactoryOption {
	return factoryOption(func(o *options) {
		if m == nil {
			o.memberErr = errNilMember
			return
		}
		o.member = m.member
	})
}

var errNilMember = errors.New("generic: WithMembership(nil): make the Member with NewMember")

// MembershipStatus is where a replica stands in its membership, for its
// status and metrics.
type MembershipStatus struct {
	// Group and Identity are the Membership's.
	Group, Identity string
	// Members are the identities of the live replicas the replica moves
	// to, sorted (nil until it first read the Leases), and Shard its
	// shard among them (zero while it leaves: it is not among them).
	Members []string
	Shard   Shard
	// Owned is what its controllers own now (Ownership.String); Owns says
	// whether that is the whole of Shard. Both come from the one state the
	// membership moves by, whichever way it changed: while and after a
	// leave, Owned is "none" and Owns false.
	Owned string
	Owns  bool
	// Phase is how far it has moved to Members: "Widened" (it holds the
	// union of its old shard and Shard), "Narrowed" (Shard alone), or ""
	// before it joined.
	Phase string
	// Leaving is set from the start of its leave (Shutdown, or the end of
	// Start's context) and stays set once it has left; SteppedDown while
	// it owns nothing because it could not renew its Lease within
	// RenewDeadline.
	Leaving, SteppedDown bool
	// LastReshard is when it last narrowed to a new membership (zero:
	// never).
	LastReshard time.Time
	// ReadError is the error of its last read of the Leases (nil if it
	// succeeded): it takes no step until a read succeeds.
	ReadError error
}

// config is the runner's Config of m, with the defaults filled in, or
// why it cannot run.
func (m Membership) config() (membership.Config, time.Duration, error) {
	c := membership.Config{
		Client: m.Leases, Group: m.Group, Identity: m.Identity,
		LeaseDuration: orDefault(m.LeaseDuration, 15*time.Second),
		RenewDeadline: orDefault(m.RenewDeadline, 10*time.Second),
		RetryPeriod:   orDefault(m.RetryPeriod, 2*time.Second),
	}
	if m.Leases == nil || isNilPointer(m.Leases) {
		return c, 0, errors.New("generic: WithMembership: no Leases client")
	}
	if err := c.Validate(); err != nil {
		return c, 0, fmt.Errorf("generic: WithMembership: %w", err)
	}
	if errs := content.IsDNS1123Subdomain(m.Identity); len(errs) > 0 {
		return c, 0, fmt.Errorf("generic: WithMembership: Identity %q: %s", m.Identity, strings.Join(errs, "; "))
	}
	if errs := content.IsLabelValue(m.Group); len(errs) > 0 {
		return c, 0, fmt.Errorf("generic: WithMembership: Group %q: %s", m.Group, strings.Join(errs, "; "))
	}
	if m.LeaveTimeout < 0 {
		return c, 0, fmt.Errorf("generic: WithMembership: negative LeaveTimeout %v", m.LeaveTimeout)
	}
	return c, orDefault(m.LeaveTimeout, c.LeaseDuration), nil
}

func orDefault(d, otherwise time.Duration) time.Duration {
	if d == 0 {
		return otherwise
	}
	return d
}

// ErrMembershipReshards is BeginReshard's and Reshard's error on a factory
// with a membership, which moves its shard itself.
var ErrMembershipReshards = errors.New("generic: the factory's membership reshards it (WithMembership)")

// MembershipMetricsProvider is a MetricsProvider that also measures a
// replica's membership: a factory with WithMembership and
// WithMetricsProvider(provider) calls NewMembershipMetrics once, when the
// replica joins its group (Start), with a func that returns the
// membership's status now, for the provider to read when it collects; and
// the returned remove (if not nil) once the replica has left. The status
// is Membership's: while the replica leaves, it says Leaving and that it
// owns nothing. The
// Prometheus adapter (package genericprometheus) is one.
type MembershipMetricsProvider interface {
	MetricsProvider
	NewMembershipMetrics(group, identity string, status func() MembershipStatus) (remove func())
}
