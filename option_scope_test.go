package generic_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// diagnostic is a type error in a fixture: its line, and its message. In a
// want, Msg is the part of the message that must appear (the compiler's
// wording of the operands around it may change).
type diagnostic struct {
	Line int
	Msg  string
}

// sameDiagnostic matches a diagnostic to a want whose Msg it contains.
var sameDiagnostic = cmp.Comparer(func(a, b diagnostic) bool {
	return a.Line == b.Line && (strings.Contains(a.Msg, b.Msg) || strings.Contains(b.Msg, a.Msg))
})

// wrongScope is what go/types says of a FactoryOption given where an
// InformerOption is wanted.
const wrongScope = "generic.FactoryOption does not implement generic.InformerOption (missing method applyToInformer)"

// TestOptionScopeIsCheckedByTheCompiler type-checks the programs in
// testdata/optionscope against this package, for issue 39: an option given
// where it has no meaning must not compile. WithMembership is a factory's
// option alone, so passing it to Acquire, NewInformer or typed.InformerFor
// is a type error, not an error at run time or an option silently ignored;
// the informer options (WithNamespace) are accepted by factories and
// informers alike.
func TestOptionScopeIsCheckedByTheCompiler(t *testing.T) {
	tests := []struct {
		file string
		want []diagnostic
	}{{
		file: "membership_to_acquire.go.txt",
		want: []diagnostic{{Line: 11, Msg: wrongScope}},
	}, {
		file: "membership_to_newinformer.go.txt",
		want: []diagnostic{{Line: 12, Msg: wrongScope}},
	}, {
		file: "membership_to_newfactory.go.txt",
	}, {
		file: "namespace_to_acquire_and_newfactory.go.txt",
	}, {
		file: "membership_to_typed.go.txt",
		want: []diagnostic{{Line: 15, Msg: wrongScope}},
	}}

	fset := token.NewFileSet()
	files := make(map[string]*ast.File, len(tests))
	var imports []string
	for _, tt := range tests {
		f, err := parser.ParseFile(fset, filepath.Join("testdata", "optionscope", tt.file), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		files[tt.file] = f
		for _, spec := range f.Imports {
			path, err := strconv.Unquote(spec.Path.Value)
			if err != nil {
				t.Fatal(err)
			}
			imports = append(imports, path)
		}
	}
	slices.Sort(imports)
	imp := exportDataImporter(t, fset, slices.Compact(imports))

	for _, tt := range tests {
		t.Run(strings.TrimSuffix(tt.file, ".go.txt"), func(t *testing.T) {
			var got []diagnostic
			conf := types.Config{
				Importer: imp,
				Error: func(err error) {
					var terr types.Error
					if !errors.As(err, &terr) {
						t.Fatalf("not a type error: %v", err)
					}
					got = append(got, diagnostic{Line: fset.Position(terr.Pos).Line, Msg: terr.Msg})
				},
			}
			// The errors are in got; Check's is the first of them.
			_, _ = conf.Check("optionscope", fset, []*ast.File{files[tt.file]}, nil)
			if diff := cmp.Diff(tt.want, got, sameDiagnostic); diff != "" {
				t.Errorf("type errors in %s (-want +got):\n%s", tt.file, diff)
				for _, d := range got {
					t.Logf("%s:%d: %s", tt.file, d.Line, d.Msg)
				}
			}
		})
	}
}

// exportDataImporter returns an importer of the packages paths and their
// dependencies, as this module builds them, from the export data the go
// command writes (go list -export): much faster than type-checking
// client-go and k8s.io/api from source (importer "source"). It builds them
// with this test's -race and -tags, so that it finds in the build cache the
// packages go test has just compiled, rather than compiling them again.
func exportDataImporter(t *testing.T, fset *token.FileSet, paths []string) types.Importer {
	t.Helper()
	args := []string{"list", "-export", "-deps", "-f", "{{if .Export}}{{.ImportPath}}={{.Export}}{{end}}"}
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, s := range info.Settings {
			switch s.Key {
			case "-race", "-msan", "-asan":
				if s.Value == "true" {
					args = append(args, s.Key)
				}
			case "-tags":
				args = append(args, "-tags="+s.Value)
			}
		}
	}
	var stderr bytes.Buffer
	cmd := exec.Command("go", append(args, paths...)...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -export: %v\n%s", err, stderr.Bytes())
	}
	exports := make(map[string]string)
	for sc := bufio.NewScanner(bytes.NewReader(out)); sc.Scan(); {
		if path, file, ok := strings.Cut(sc.Text(), "="); ok {
			exports[path] = file
		}
	}
	return importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		file, ok := exports[path]
		if !ok {
			return nil, fmt.Errorf("no export data for %q", path)
		}
		return os.Open(file)
	})
}
