package generic_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestMigrationTableNamesEveryAcceptedBreak: each incompatible change of
// hack/api/accepted.txt names ("  # M<n>") the row of docs/migration.md's
// table of compiler errors, in its "### This release" section, that tells
// users what to write instead; every such row is named by an entry,
// unless its "what changed" cell starts with "Not an API break" (and then
// no entry names it). See CONTRIBUTING.md, API compatibility.
func TestMigrationTableNamesEveryAcceptedBreak(t *testing.T) {
	if diff := cmp.Diff([]string(nil), migrationTableProblems(t, "hack/api/accepted.txt", "docs/migration.md")); diff != "" {
		t.Errorf("hack/api/accepted.txt against docs/migration.md's table (-want +got):\n%s", diff)
	}
}

// TestMigrationTableProblems: what the check above reports, on fixtures.
func TestMigrationTableProblems(t *testing.T) {
	tests := []struct {
		name     string
		accepted string
		doc      string
		want     []string
	}{
		{
			name:     "every entry names a row, every row but one not an API break is named",
			accepted: "named.txt", doc: "migration.md",
		},
		{
			name:     "an entry that names no row",
			accepted: "unnamed.txt", doc: "migration.md",
			want: []string{`unnamed.txt:3: names no row of migration.md's table: "example.com/generic/typed: WithResource: removed"`},
		},
		{
			name:     "rows the table of this release lacks",
			accepted: "unknown.txt", doc: "migration.md",
			want: []string{
				`unknown.txt:4: names M4, which migration.md's table lacks`,
				`unknown.txt:5: names M9, which migration.md's table lacks`,
			},
		},
		{
			name:     "a row no entry names",
			accepted: "unused.txt", doc: "migration.md",
			want: []string{`migration.md: row M3 is named by no entry of unused.txt (mark it "Not an API break" if it is not one)`},
		},
		{
			name:     "an entry that names a row that is not an API break",
			accepted: "notabreak.txt", doc: "migration.md",
			want: []string{`notabreak.txt:3: names M1, which migration.md marks "Not an API break"`},
		},
		{
			name:     "an annotation that is not row IDs",
			accepted: "malformed.txt", doc: "migration.md",
			want: []string{
				`malformed.txt:2: annotation "# see M2" is not "# M<n>" (row IDs, separated by spaces)`,
				`migration.md: row M2 is named by no entry of malformed.txt (mark it "Not an API break" if it is not one)`,
			},
		},
		{
			name:     "rows with one ID, and an anchor that is not the ID's",
			accepted: "named.txt", doc: "migration-ids.md",
			want: []string{
				`migration-ids.md: row M2 appears 2 times`,
				`migration-ids.md: row M3 has anchor id "m4", not "m3"`,
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join("testdata", "migrationtable")
			got := migrationTableProblems(t, filepath.Join(dir, tc.accepted), filepath.Join(dir, tc.doc))
			for i := range got {
				got[i] = strings.ReplaceAll(got[i], dir+string(filepath.Separator), "")
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

// migrationRow is one row of the table of compiler errors.
type migrationRow struct {
	id          string
	anchor      string
	notABreak   bool
	occurrences int
}

// migrationRowLine matches a row of the table: | <a id="m7"></a>M7 | ...
var migrationRowLine = regexp.MustCompile(`^\|\s*<a id="([^"]*)"></a>(M[0-9]+)\s*\|`)

// annotationStart is where an entry's annotation starts: the first '#'
// after a space, which hack/apicheck.sh ignores from there on.
var annotationStart = regexp.MustCompile(`\s+#`)

// migrationAnnotation matches an entry's annotation: "# M7" or "# M7 M8".
var migrationAnnotation = regexp.MustCompile(`^#( M[0-9]+)+$`)

// migrationTableProblems returns what is wrong between the entries of
// accepted (hack/api/accepted.txt's format) and the rows of doc's table
// in its "### This release" section, one message per problem, in the
// files' order; nil if nothing is.
func migrationTableProblems(t *testing.T, accepted, doc string) []string {
	t.Helper()
	rows, problems := migrationTableRows(t, doc)
	named := map[string]bool{}
	for i, line := range strings.Split(readFile(t, accepted), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		at := fmt.Sprintf("%s:%d", accepted, i+1)
		loc := annotationStart.FindStringIndex(line)
		if loc == nil {
			problems = append(problems, fmt.Sprintf("%s: names no row of %s's table: %q", at, filepath.Base(doc), line))
			continue
		}
		annotation := line[loc[1]-1:]
		switch {
		case !migrationAnnotation.MatchString(annotation):
			problems = append(problems, fmt.Sprintf("%s: annotation %q is not \"# M<n>\" (row IDs, separated by spaces)", at, annotation))
			continue
		}
		for _, id := range strings.Fields(strings.TrimPrefix(annotation, "#")) {
			row, ok := rows[id]
			switch {
			case !ok:
				problems = append(problems, fmt.Sprintf("%s: names %s, which %s's table lacks", at, id, filepath.Base(doc)))
			case row.notABreak:
				problems = append(problems, fmt.Sprintf("%s: names %s, which %s marks \"Not an API break\"", at, id, filepath.Base(doc)))
			}
			named[id] = true
		}
	}
	for _, id := range migrationRowOrder(rows) {
		if row := rows[id]; !row.notABreak && !named[id] {
			problems = append(problems, fmt.Sprintf("%s: row %s is named by no entry of %s (mark it \"Not an API break\" if it is not one)", doc, id, filepath.Base(accepted)))
		}
	}
	return problems
}

// migrationTableRows returns the rows of the table of doc's "### This
// release" section by ID, and the problems of their IDs: an ID on two
// rows, an anchor that is not the lowercased ID.
func migrationTableRows(t *testing.T, doc string) (map[string]migrationRow, []string) {
	t.Helper()
	rows := map[string]migrationRow{}
	var problems []string
	for _, line := range strings.Split(markdownSection(t, doc, "### This release"), "\n") {
		m := migrationRowLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		anchor, id := m[1], m[2]
		row := rows[id]
		row.id, row.anchor, row.occurrences = id, anchor, row.occurrences+1
		if cells := tableCells(line); len(cells) > 2 {
			row.notABreak = strings.HasPrefix(cells[2], "Not an API break")
		}
		rows[id] = row
	}
	for _, id := range migrationRowOrder(rows) {
		switch row := rows[id]; {
		case row.occurrences > 1:
			problems = append(problems, fmt.Sprintf("%s: row %s appears %d times", doc, id, row.occurrences))
		case row.anchor != strings.ToLower(id):
			problems = append(problems, fmt.Sprintf("%s: row %s has anchor id %q, not %q", doc, id, row.anchor, strings.ToLower(id)))
		}
	}
	return rows, problems
}

// markdownSection returns the text of doc from the heading line section
// to the next heading of its level or above; all of doc for "".
func markdownSection(t *testing.T, doc, section string) string {
	t.Helper()
	text := readFile(t, doc)
	if section == "" {
		return text
	}
	_, rest, found := strings.Cut(text, "\n"+section+"\n")
	if !found {
		t.Fatalf("%s has no heading %q", doc, section)
	}
	level := strings.Index(section, " ")
	if end := regexp.MustCompile(fmt.Sprintf(`\n#{1,%d} `, level)).FindStringIndex(rest); end != nil {
		rest = rest[:end[0]]
	}
	return rest
}

// tableCells splits a Markdown table row into its cells, trimmed; a '|'
// in a code span or escaped as "\|" is text.
func tableCells(line string) []string {
	var cells []string
	var cell strings.Builder
	inCode := false
	for i := 0; i < len(line); i++ {
		switch c := line[i]; {
		case c == '\\' && i+1 < len(line) && line[i+1] == '|':
			cell.WriteString(`\|`)
			i++
		case c == '`':
			inCode = !inCode
			cell.WriteByte(c)
		case c == '|' && !inCode:
			cells = append(cells, strings.TrimSpace(cell.String()))
			cell.Reset()
		default:
			cell.WriteByte(c)
		}
	}
	// A row starts and ends with '|': drop the empty text outside them.
	if len(cells) > 0 {
		cells = cells[1:]
	}
	return cells
}

// migrationRowOrder returns the IDs of rows in their numbers' order.
func migrationRowOrder(rows map[string]migrationRow) []string {
	ids := make([]string, 0, len(rows))
	for id := range rows {
		ids = append(ids, id)
	}
	number := func(id string) int {
		n, _ := strconv.Atoi(strings.TrimPrefix(id, "M")) // IDs match M[0-9]+
		return n
	}
	slices.SortFunc(ids, func(a, b string) int { return number(a) - number(b) })
	return ids
}

// readFile returns the text of path, or fails the test.
func readFile(t *testing.T, path string) string {
	t.Helper()
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(text)
}
