package generic_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// exampleMarker precedes a README code block copied from an Example
// function: <!-- example: FILE FUNCTION -->.
var exampleMarker = regexp.MustCompile("(?s)<!-- example: (\\S+) (\\S+) -->\\s*```go\\n(.*?)```")

// TestREADMEQuickStartIsExampleCode checks that every Go block of README.md
// marked as an example appears, line for line and in order, in the body of
// the Example function it names: the quick start compiles and runs because
// the Example does.
func TestREADMEQuickStartIsExampleCode(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := exampleMarker.FindAllStringSubmatch(string(readme), -1)
	if len(blocks) < 3 {
		t.Fatalf("README.md has %d marked example blocks, want the typed, unstructured and typed-view ones", len(blocks))
	}
	for _, block := range blocks {
		file, function, code := block[1], block[2], block[3]
		t.Run(file+" "+function, func(t *testing.T) {
			body := functionBody(t, file, function)
			if missing := missingInOrder(trimmedLines(code), trimmedLines(body)); missing != nil {
				t.Errorf("README lines not in %s, in this order:\n%s", function, strings.Join(missing, "\n"))
			}
		})
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
		"go -C e2e run ./cmd/kwatch   # the main job",
		"bash hack/test.sh            # the tests",
	}
	if diff := cmp.Diff(want, trimmedLines(first[1])); diff != "" {
		t.Errorf("README's set-up commands (-want +got):\n%s", diff)
	}
}

// functionBody returns the source of the body of function in file.
func functionBody(t *testing.T, file, function string) string {
	t.Helper()
	src, err := os.ReadFile(file)
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
