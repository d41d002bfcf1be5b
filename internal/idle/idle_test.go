package idle

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestReportString(t *testing.T) {
	many := make([]Busy, maxNamed+2)
	for i := range many {
		many[i] = Busy{Key: fmt.Sprintf("team-a/w%02d", i), State: "queued"}
	}
	tests := []struct {
		name   string
		report Report
		want   string
	}{
		{"idle", Report{Idle: true}, "idle"},
		{"not running", Report{NotRunning: "controller c is not running (Run was not called)"}, "controller c is not running (Run was not called)"},
		{"queued, unnamed", Report{Queued: 2}, "2 keys queued"},
		{"a key and its cause", Report{Busy: []Busy{{Key: "team-a/large", State: "waiting to be retried", Cause: "its last reconcile failed: boom"}, {Key: "team-b/small", State: "queued"}}},
			"team-a/large: waiting to be retried: its last reconcile failed: boom; team-b/small: queued"},
		{"more keys than named", Report{Busy: many},
			"team-a/w00: queued; team-a/w01: queued; team-a/w02: queued; team-a/w03: queued; team-a/w04: queued; team-a/w05: queued; team-a/w06: queued; team-a/w07: queued; team-a/w08: queued; team-a/w09: queued; and 2 more keys"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.report.String()); diff != "" {
				t.Errorf("String (-want +got):\n%s", diff)
			}
		})
	}
}

// reporter is a Reporter that is idle.
type reporter struct{}

func (reporter) IdleReport(Key) Report { return Report{Idle: true} }

// TestOf: a Reporter answers; anything else, false.
func TestOf(t *testing.T) {
	type result struct {
		Report Report
		OK     bool
	}
	var got []result
	for _, v := range []any{reporter{}, "unknown", nil} {
		r, ok := Of(v)
		got = append(got, result{r, ok})
	}
	if diff := cmp.Diff([]result{{Report{Idle: true}, true}, {}, {}}, got); diff != "" {
		t.Errorf("Of (-want +got):\n%s", diff)
	}
}
