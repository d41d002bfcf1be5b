package generic_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// clientGoVersionMentions match where documentation names a client-go
// version: "client-go v0.38.0-beta.0's", "client-go, apimachinery, api
// (v0.38.0-beta.0)", and README's Compatibility row of main.
var clientGoVersionMentions = []*regexp.Regexp{
	regexp.MustCompile(`client-go (v[0-9]+\.[0-9]+(?:\.[0-9]+)?(?:-[0-9A-Za-z]+(?:\.[0-9]+)*)?)`),
	regexp.MustCompile(`client-go, apimachinery,? (?:and )?api \((v[^)\s]+)\)`),
	regexp.MustCompile(`(?m)^\| main \| [^|]*\| (v[^|\s]+) \|`),
}

// TestDocsNameGoModClientGo: the drop-in sections of docs/migration.md
// ("every name of client-go vX's packages") name the k8s.io/client-go
// version of go.mod, and README names it or its minor (v0.38), so that
// moving go.mod to another client-go fails here until they say so.
func TestDocsNameGoModClientGo(t *testing.T) {
	version := goModRequirement(t, "go.mod", "k8s.io/client-go")
	tests := []struct {
		name    string
		doc     string
		section string // the heading that starts the section; "" for the whole document
		// minor allows the minor alone (v0.38), for text about the line.
		minor bool
	}{
		{name: "the dynamicinformer drop-in", doc: "docs/migration.md", section: "## From dynamicinformer and dynamiclister"},
		{name: "the metadatainformer drop-in", doc: "docs/migration.md", section: "## From metadatainformer and metadatalister"},
		{name: "README", doc: "README.md", minor: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			where := tc.doc
			if tc.section != "" {
				where += ", " + strings.TrimLeft(tc.section, "# ") + ","
			}
			mentions := clientGoVersions(markdownSection(t, tc.doc, tc.section))
			if len(mentions) == 0 {
				t.Fatalf("%s names no client-go version; it should name go.mod's, %s", where, version)
			}
			var other []string
			for _, mention := range mentions {
				if mention != version && !(tc.minor && mention == minorOf(version)) {
					other = append(other, mention)
				}
			}
			if diff := cmp.Diff([]string(nil), other); diff != "" {
				t.Errorf("%s names client-go versions other than go.mod's %s (-want +got):\n%s", where, version, diff)
			}
		})
	}
}

// clientGoVersions returns the client-go versions text names, in the
// order of clientGoVersionMentions, then of the text.
func clientGoVersions(text string) []string {
	var versions []string
	for _, mention := range clientGoVersionMentions {
		for _, m := range mention.FindAllStringSubmatch(text, -1) {
			versions = append(versions, m[1])
		}
	}
	return versions
}

// goModRequirement returns the version of module that the go.mod at path
// requires, or fails the test.
func goModRequirement(t *testing.T, path, module string) string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^\s*(?:require\s+)?` + regexp.QuoteMeta(module) + `\s+(v\S+)`).FindStringSubmatch(readFile(t, path))
	if m == nil {
		t.Fatalf("%s requires no %s", path, module)
	}
	return m[1]
}

// minorOf returns "v0.38" of "v0.38.0-beta.0".
func minorOf(version string) string {
	parts := strings.SplitN(version, ".", 3)
	if len(parts) < 2 {
		return version
	}
	return parts[0] + "." + parts[1]
}
