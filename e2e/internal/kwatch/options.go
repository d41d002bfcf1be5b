package kwatch

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coordinationclient "k8s.io/client-go/kubernetes/typed/coordination/v1"

	"github.com/generic-informers/generic"
)

// Options are kwatch's flags and arguments.
type Options struct {
	// Kubeconfig is the kubeconfig file; empty means $KUBECONFIG, and with
	// neither, an embedded API server.
	Kubeconfig string
	// Namespace limits namespaced resources to one namespace ("" = all).
	Namespace string
	// Selector is a label selector for every resource.
	Selector string
	// Output is "text" (default) or "json": one JSON object per event.
	Output string
	// Duration ends the watch after that long; 0 watches until ctx ends
	// (or, in the demo, until its script is done).
	Duration time.Duration
	// Resources are plural resource names, optionally with a group:
	// "configmaps", "widgets.example.com".
	Resources []string
	// Testdata is the repository's testdata folder, for the demo.
	Testdata string
	// DemoObjects is how many more ConfigMaps the demo creates before it
	// watches (demo-lab/bulk-00000, ...), for an initial sync of some
	// size.
	DemoObjects int
	// MetricsAddr, if set, is where kwatch serves the informers' metrics
	// (genericprometheus) at /metrics while it watches: "host:port", or
	// "127.0.0.1:0" for any free port.
	MetricsAddr string
	// Shard, "index/count", makes every informer hold one shard of its
	// resource's objects (generic.WithShard); "" holds them all.
	Shard string
	// Member, "group" or "group/identity", makes kwatch a replica of a
	// Lease membership (generic.WithMembership): the live replicas of the
	// group share every resource's objects, and reshard among themselves
	// as replicas come and go. The identity defaults to the host's name;
	// the Leases live in LeaseNamespace (default "default").
	Member, LeaseNamespace string
	// Linger keeps kwatch watching, and serving metrics, this long after
	// the demo's script is done.
	Linger time.Duration
	// AfterWatch, if set, is called when the watch (the demo's script and
	// Linger) is done, before the informers stop, with the URL of the
	// metrics ("" without MetricsAddr): tests scrape it there.
	AfterWatch func(metricsURL string)

	// Out receives events and, in text mode, progress and the summary;
	// Err receives progress and the summary in json mode.
	Out, Err io.Writer
}

const (
	outputText = "text"
	outputJSON = "json"
)

// resolve checks o and fills in the defaults.
func (o Options) resolve() (Options, error) {
	if o.Output == "" {
		o.Output = outputText
	}
	if o.Output != outputText && o.Output != outputJSON {
		return o, fmt.Errorf("-o %q: want text or json", o.Output)
	}
	if o.Duration < 0 {
		return o, fmt.Errorf("--duration %v: want 0 or more", o.Duration)
	}
	if o.DemoObjects < 0 || o.DemoObjects > 1_000_000 {
		return o, fmt.Errorf("--demo-objects %d: want 0 to 1000000", o.DemoObjects)
	}
	if o.Shard != "" {
		if _, err := generic.ParseShard(o.Shard); err != nil {
			return o, fmt.Errorf("--shard: %w", err)
		}
	}
	if o.Member != "" {
		if o.Shard != "" {
			return o, fmt.Errorf("--member and --shard: the membership gives the shard")
		}
		if group, _, _ := strings.Cut(o.Member, "/"); group == "" {
			return o, fmt.Errorf("--member %q: want group or group/identity", o.Member)
		}
	}
	if o.Linger < 0 {
		return o, fmt.Errorf("--linger %v: want 0 or more", o.Linger)
	}
	if o.Kubeconfig == "" {
		o.Kubeconfig = os.Getenv("KUBECONFIG")
	}
	if o.Testdata == "" {
		o.Testdata = "../testdata"
	}
	if o.Out == nil {
		o.Out = os.Stdout
	}
	if o.Err == nil {
		o.Err = os.Stderr
	}
	return o, nil
}

// embedded reports whether kwatch runs its own API server.
func (o Options) embedded() bool { return o.Kubeconfig == "" }

// demo reports whether kwatch runs the scripted demo.
func (o Options) demo() bool { return o.embedded() && len(o.Resources) == 0 }

// status is where progress and the summary go: next to the events in text
// mode, apart from them in json mode, so that stdout stays JSON lines.
func (o Options) status() io.Writer {
	if o.Output == outputJSON {
		return o.Err
	}
	return o.Out
}

// membership is --member's Membership, its Leases read and written with
// leases; the factory checks the names.
func (o Options) membership(leases coordinationclient.LeaseInterface) (generic.Membership, error) {
	group, identity, found := strings.Cut(o.Member, "/")
	if !found {
		host, err := os.Hostname()
		if err != nil {
			return generic.Membership{}, fmt.Errorf("--member %s: no identity given, and the host's name: %w", o.Member, err)
		}
		identity = strings.ToLower(host)
	}
	return generic.Membership{Leases: leases, Group: group, Identity: identity}, nil
}

// leaseNamespace is where the membership's Leases live.
func (o Options) leaseNamespace() string {
	if o.LeaseNamespace == "" {
		return metav1.NamespaceDefault
	}
	return o.LeaseNamespace
}
