package generic_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// exampleMarker precedes a documentation code block copied from a
// function, usually an Example: <!-- example: FILE FUNCTION -->. FILE is
// relative to the repository root, whichever document the marker is in.
var exampleMarker = regexp.MustCompile("(?s)<!-- example: (\\S+) (\\S+) -->\\s*```go\\n(.*?)```")

// uncheckedMarker precedes a Go block that is deliberately not checked
// (a before/after line of a migration, say): <!-- not checked: WHY -->.
var uncheckedMarker = regexp.MustCompile(`<!-- not checked: [^>]+ -->\s*$`)

// docsWithExamples are the documents whose marked Go blocks are checked,
// relative to the repository root (the package directory): README.md,
// every topic of docs/ and the e2e module's README.
func docsWithExamples(t *testing.T) []string {
	t.Helper()
	topics, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	return append(append([]string{"README.md"}, topics...), "e2e/README.md")
}

// docsWithLinks are the documents whose relative links are checked.
func docsWithLinks(t *testing.T) []string {
	return append(docsWithExamples(t), "CONTRIBUTING.md", "CHANGELOG.md")
}

// TestREADMEQuickStartIsExampleCode checks that every Go block of
// README.md, docs/*.md and e2e/README.md marked as an example appears,
// line for line and in order, in the body of the function it names: the
// documentation compiles and runs because the Example (or test) does.
func TestREADMEQuickStartIsExampleCode(t *testing.T) {
	for _, doc := range docsWithExamples(t) {
		t.Run(doc, func(t *testing.T) {
			text, err := os.ReadFile(doc)
			if err != nil {
				t.Fatal(err)
			}
			blocks := exampleMarker.FindAllStringSubmatch(string(text), -1)
			if doc == "README.md" && !slices.ContainsFunc(blocks, func(block []string) bool { return block[2] == "ExampleInformerFor" }) {
				t.Errorf("README.md has no marked ExampleInformerFor block (the first informer)")
			}
			for _, block := range blocks {
				file, function, code := block[1], block[2], block[3]
				t.Run(file+" "+function, func(t *testing.T) {
					body := functionBody(t, file, function)
					if missing := missingInOrder(trimmedLines(code), trimmedLines(body)); missing != nil {
						t.Errorf("%s lines not in %s, in this order:\n%s", doc, function, strings.Join(missing, "\n"))
					}
				})
			}
		})
	}
}

// TestDocsGoBlocksAreChecked checks that every Go block of the documents
// is either marked as an example (and so checked) or says why it is not.
func TestDocsGoBlocksAreChecked(t *testing.T) {
	goBlock := regexp.MustCompile("(?m)^[ \\t]*```go\\n")
	for _, doc := range docsWithExamples(t) {
		text, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		for _, loc := range goBlock.FindAllStringIndex(string(text), -1) {
			before := strings.TrimRight(string(text[:loc[0]]), " \t\n")
			line := strings.TrimSpace(before[strings.LastIndex(before, "\n")+1:])
			if !strings.HasPrefix(line, "<!-- example: ") && !uncheckedMarker.MatchString(line) {
				t.Errorf("%s:%d: a Go block with neither <!-- example: FILE FUNCTION --> nor <!-- not checked: WHY --> before it",
					doc, strings.Count(string(text[:loc[0]]), "\n")+1)
			}
		}
	}
}

func TestREADMECommands(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	first := regexp.MustCompile("(?s)```sh\\n(.*?)```").FindStringSubmatch(string(readme))
	if first == nil {
		t.Fatal("README.md has no sh block")
	}
	want := []string{
		"export GOTOOLCHAIN=go1.27.3; go -C e2e run ./cmd/kwatch   # the main job",
		"export GOTOOLCHAIN=go1.27.3; bash hack/test.sh            # the tests",
	}
	if diff := cmp.Diff(want, trimmedLines(first[1])); diff != "" {
		t.Errorf("README's set-up commands (-want +got):\n%s", diff)
	}
}

// TestDocsLinks checks that every relative link of the documents names a
// file that exists and, for a link into a Markdown file with #anchor, a
// heading of that file or an HTML anchor (<a id="anchor">, as the rows of
// migration.md's table of compiler errors have).
func TestDocsLinks(t *testing.T) {
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	for _, doc := range docsWithLinks(t) {
		text, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		for _, match := range link.FindAllStringSubmatch(withoutCode(string(text)), -1) {
			target := match[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path, anchor, _ := strings.Cut(target, "#")
			if path == "" {
				path = doc
			} else {
				path = filepath.Join(filepath.Dir(doc), path)
			}
			if _, err := os.Stat(path); err != nil {
				t.Errorf("%s: link %q: %v", doc, target, err)
				continue
			}
			if anchor != "" && strings.HasSuffix(path, ".md") && !slices.Contains(headingAnchors(t, path), anchor) && !slices.Contains(htmlAnchors(t, path), anchor) {
				t.Errorf("%s: link %q: %s has no heading or <a id> with anchor #%s", doc, target, path, anchor)
			}
		}
	}
}

// TestDocsE2EReplaceBlock checks that the replace block e2e/README.md
// tells a module of one's own to copy is e2e/go.mod's.
func TestDocsE2EReplaceBlock(t *testing.T) {
	readme, err := os.ReadFile("e2e/README.md")
	if err != nil {
		t.Fatal(err)
	}
	block := regexp.MustCompile("(?s)<!-- replace block of e2e/go.mod -->\\s*```go-mod\\n(.*?)```").FindStringSubmatch(string(readme))
	if block == nil {
		t.Fatal("e2e/README.md has no go-mod block marked <!-- replace block of e2e/go.mod -->")
	}
	gomod, err := os.ReadFile("e2e/go.mod")
	if err != nil {
		t.Fatal(err)
	}
	want := regexp.MustCompile(`(?s)\nreplace \(\n.*?\n\)\n`).FindString("\n" + string(gomod))
	if want == "" {
		t.Fatal("e2e/go.mod has no replace ( ... ) block")
	}
	if diff := cmp.Diff(trimmedLines(want), trimmedLines(block[1])); diff != "" {
		t.Errorf("e2e/README.md's replace block is not e2e/go.mod's (-go.mod +README):\n%s", diff)
	}
}

// withoutCode returns text with its fenced code blocks and code spans
// removed, so that what they hold is not taken for links.
func withoutCode(text string) string {
	return regexp.MustCompile("`[^`\n]*`").ReplaceAllString(withoutFences(text), "")
}

// headingAnchors returns the anchors GitHub gives the headings of a
// Markdown file: lowercased, punctuation but '-' and '_' dropped, spaces
// made '-'.
func headingAnchors(t *testing.T, path string) []string {
	t.Helper()
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var anchors []string
	for _, heading := range regexp.MustCompile(`(?m)^#{1,6} +(.+?)\s*$`).FindAllStringSubmatch(withoutFences(string(text)), -1) {
		var b strings.Builder
		for _, r := range strings.ToLower(heading[1]) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
				b.WriteRune(r)
			}
		}
		anchors = append(anchors, b.String())
	}
	return anchors
}

// htmlAnchors returns the ids of the <a id="..."> elements of a Markdown
// file, outside its code.
func htmlAnchors(t *testing.T, path string) []string {
	t.Helper()
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var anchors []string
	for _, a := range regexp.MustCompile(`<a id="([^"]+)"></a>`).FindAllStringSubmatch(withoutCode(string(text)), -1) {
		anchors = append(anchors, a[1])
	}
	return anchors
}

// withoutFences returns text with its fenced code blocks removed.
func withoutFences(text string) string {
	return regexp.MustCompile("(?s)```.*?```").ReplaceAllString(text, "")
}

// functionBody returns the source of the body of function in file, a path
// relative to the repository root.
func functionBody(t *testing.T, file, function string) string {
	t.Helper()
	src, err := os.ReadFile(filepath.FromSlash(file))
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	parsed, err := parser.ParseFile(fset, file, src, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, decl := range parsed.Decls {
		if fn, ok := decl.(*ast.FuncDecl); ok && fn.Name.Name == function {
			return string(src[fset.Position(fn.Body.Lbrace).Offset:fset.Position(fn.Body.Rbrace).Offset])
		}
	}
	t.Fatalf("%s has no function %s", file, function)
	return ""
}

func trimmedLines(text string) []string {
	var lines []string
	for _, line := range strings.Split(text, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			lines = append(lines, line)
		}
	}
	return lines
}

// missingInOrder returns the lines of want not found in got in order.
func missingInOrder(want, got []string) []string {
	var missing []string
	next := 0
	for _, line := range want {
		found := false
		for i := next; i < len(got); i++ {
			if got[i] == line {
				next, found = i+1, true
				break
			}
		}
		if !found {
			missing = append(missing, line)
		}
	}
	return missing
}
