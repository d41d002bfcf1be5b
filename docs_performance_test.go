package generic_test

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// cacheSizeRow is one contender's row of a table of benchmarks.md's Cache
// size section.
type cacheSizeRow struct {
	bytes    int           // B/object
	ratio    string        // vs client-go-typed, as written: "0.47×"
	syncText string        // sync time alone, as written: "9.59 s"
	sync     time.Duration // the same
}

// TestDocsPerformanceFigures: the routes table of docs/performance.md
// gives, for each route, the figures of the benchmark report's Cache size
// tables (docs/benchmarks.md) for the contender it names in parentheses,
// and the report still says what the advice under the table rests on.
// Regenerating the report with other figures fails here until
// performance.md says them, and its advice follows them.
func TestDocsPerformanceFigures(t *testing.T) {
	pods := cacheSizeTable(t, "### Realistic Pods")
	configMaps := cacheSizeTable(t, "### ConfigMaps with payloads of their own")

	t.Run("the routes table", func(t *testing.T) {
		var want, got []string
		for _, row := range performanceRoutes(t) {
			contender := regexp.MustCompile("\\(`([a-z-]+)`\\)$").FindStringSubmatch(row[0])
			if contender == nil {
				t.Errorf("docs/performance.md: route %q names no contender of the report in parentheses", row[0])
				continue
			}
			p, c := pods[contender[1]], configMaps[contender[1]]
			want = append(want, fmt.Sprintf("%s | %s B (%s) | %s B (%s) | %s; %s", contender[1],
				thousands(p.bytes), p.ratio, thousands(c.bytes), c.ratio, p.syncText, c.syncText))
			got = append(got, fmt.Sprintf("%s | %s | %s | %s", contender[1], row[3], row[4], row[5]))
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("docs/performance.md's routes against docs/benchmarks.md's Cache size (-report +performance.md):\n%s", diff)
		}
	})

	tests := []struct {
		name string
		// holds is what the report must say for the advice to stand.
		holds bool
		// advice is the advice of performance.md that rests on it.
		advice string
	}{
		{
			name:   "the drop-in holds less than UnstructuredFor on realistic Pods",
			holds:  pods["generic-unstructured-dropin"].bytes < pods["generic-unstructured"].bytes,
			advice: "Many objects that repeat: the drop-in.",
		},
		{
			name:   "a Go type's cache is smaller than either unstructured one",
			holds:  pods["generic-typed"].bytes < pods["generic-unstructured-dropin"].bytes && configMaps["generic-typed"].bytes < configMaps["generic-unstructured"].bytes,
			advice: "A Go type, if there is one.",
		},
		{
			name:   "objects that share little cost the same on both, within 5%",
			holds:  within(configMaps["generic-unstructured"].bytes, configMaps["generic-unstructured-dropin"].bytes, 0.05),
			advice: "Their caches cost the same either way",
		},
		{
			name:   "UnstructuredFor syncs faster than the drop-in",
			holds:  pods["generic-unstructured"].sync < pods["generic-unstructured-dropin"].sync && configMaps["generic-unstructured"].sync < configMaps["generic-unstructured-dropin"].sync,
			advice: "`UnstructuredFor` syncs them faster",
		},
	}
	advice := strings.Join(strings.Fields(readFile(t, "docs/performance.md")), " ")
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(advice, tc.advice) {
				t.Fatalf("docs/performance.md no longer says %q: change this test with the advice", tc.advice)
			}
			if !tc.holds {
				t.Errorf("docs/benchmarks.md no longer shows that %s: docs/performance.md's %q must change", tc.name, tc.advice)
			}
		})
	}
}

// cacheSizeTable returns the rows of the table under heading in
// docs/benchmarks.md's Cache size section, by contender.
func cacheSizeTable(t *testing.T, heading string) map[string]cacheSizeRow {
	t.Helper()
	rows := map[string]cacheSizeRow{}
	for _, line := range strings.Split(markdownSection(t, "docs/benchmarks.md", heading), "\n") {
		cells := tableCells(line)
		if len(cells) != 5 || !regexp.MustCompile(`^[0-9]+$`).MatchString(cells[1]) {
			continue
		}
		bytes, _ := strconv.Atoi(cells[1])
		sync, err := time.ParseDuration(strings.ReplaceAll(cells[3], " ", ""))
		if err != nil {
			t.Fatalf("docs/benchmarks.md %s: %s: sync time %q: %v", heading, cells[0], cells[3], err)
		}
		rows[cells[0]] = cacheSizeRow{bytes: bytes, ratio: cells[2], syncText: cells[3], sync: sync}
	}
	for _, contender := range []string{"generic-typed", "generic-unstructured", "generic-unstructured-dropin", "client-go-dynamic"} {
		if _, ok := rows[contender]; !ok {
			t.Fatalf("docs/benchmarks.md %s has no row of %s", heading, contender)
		}
	}
	return rows
}

// performanceRoutes returns the rows of docs/performance.md's first
// table, the routes to *unstructured.Unstructured, as cells.
func performanceRoutes(t *testing.T) [][]string {
	t.Helper()
	// The table comes before the first section.
	text, _, _ := strings.Cut(readFile(t, "docs/performance.md"), "\n## ")
	var rows [][]string
	for _, line := range strings.Split(text, "\n") {
		if cells := tableCells(line); len(cells) == 6 && !strings.HasPrefix(cells[0], "---") && cells[0] != "route" {
			rows = append(rows, cells)
		}
	}
	if len(rows) == 0 {
		t.Fatal("docs/performance.md has no routes table before its first section")
	}
	return rows
}

// thousands writes n with commas between thousands: 12,993.
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// within reports whether a and b differ by at most fraction of the larger.
func within(a, b int, fraction float64) bool {
	return float64(max(a, b)-min(a, b)) <= fraction*float64(max(a, b))
}
