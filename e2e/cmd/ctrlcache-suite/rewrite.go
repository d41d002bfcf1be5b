package main

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
)

const (
	// crCachePath is controller-runtime's cache package.
	crCachePath = "sigs.k8s.io/controller-runtime/pkg/cache"
	// ctrlcachePath is this project's controller-runtime cache backend.
	ctrlcachePath = "github.com/generic-informers/generic/ctrlcache"
	// externalTests is the package of the suite's files that use only
	// controller-runtime's public API.
	externalTests = "cache_test"
)

// rewriteDir rewrites, in place, each *_test.go file of dir that
// rewriteSource changes, and says on out what it did with each file. It
// fails if no file had a reference to rewrite: the suite has changed shape.
func rewriteDir(dir string, out io.Writer) (int, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
	if err != nil {
		return 0, err
	}
	total := 0
	for _, path := range paths {
		n, err := rewriteFile(path)
		if err != nil {
			return total, err
		}
		if n > 0 {
			fmt.Fprintf(out, "%s: %d references of cache.New now ctrlcache.New\n", filepath.Base(path), n)
		}
		total += n
	}
	if total == 0 {
		return 0, fmt.Errorf("no test file of package %s in %s refers to %s's New: has the suite changed?", externalTests, dir, crCachePath)
	}
	return total, nil
}

func rewriteFile(path string) (int, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	out, n, err := rewriteSource(path, src)
	if err != nil || n == 0 {
		return 0, err
	}
	info, err := os.Stat(path)
	if err != nil {
		return 0, err
	}
	return n, os.WriteFile(path, out, info.Mode().Perm())
}

// rewriteSource rewrites the source of one test file, named name: in a file
// of package cache_test that imports controller-runtime's cache package,
// each reference to its New (a call or a function value) becomes
// ctrlcache.New and the file imports ctrlcache; the result is gofmt'ed. It
// returns the source and the number of references rewritten; a file of
// another package, or without the import, comes back unchanged with 0. It
// refuses a file where the import's name may be shadowed (the name is
// declared in the file) or where ctrlcache is already a name.
func rewriteSource(name string, src []byte) ([]byte, int, error) {
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, name, src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return nil, 0, err
	}
	spec := importSpec(file, crCachePath)
	if file.Name.Name != externalTests || spec == nil {
		return src, 0, nil
	}
	local := "cache"
	if spec.Name != nil {
		local = spec.Name.Name
	}
	if local == "_" || local == "." {
		return nil, 0, fmt.Errorf("%s imports %s as %s: cannot rewrite its New", name, crCachePath, local)
	}
	for _, taken := range []string{local, "ctrlcache"} {
		if declares(file, taken) {
			return nil, 0, fmt.Errorf("%s declares %s: cannot rewrite cache.New safely", name, taken)
		}
	}
	if importSpec(file, ctrlcachePath) != nil || importNamed(file, "ctrlcache") {
		return nil, 0, fmt.Errorf("%s already imports ctrlcache", name)
	}
	refs := references(file, local, "New")
	if len(refs) == 0 {
		return src, 0, nil
	}
	type edit struct {
		offset, length int
		text           string
	}
	edits := []edit{{offset: fset.Position(spec.End()).Offset, text: "\n" + strconv.Quote(ctrlcachePath)}}
	if decl := importDecl(file, spec); decl != nil && !decl.Lparen.IsValid() {
		edits[0].text = "\nimport " + strconv.Quote(ctrlcachePath)
	}
	for _, ref := range refs {
		edits = append(edits, edit{offset: fset.Position(ref.Pos()).Offset, length: len(local), text: "ctrlcache"})
	}
	// Last first, so that the offsets of the others stay valid.
	slices.SortFunc(edits, func(a, b edit) int { return b.offset - a.offset })
	out := bytes.Clone(src)
	for _, e := range edits {
		out = slices.Concat(out[:e.offset], []byte(e.text), out[e.offset+e.length:])
	}
	formatted, err := format.Source(out)
	if err != nil {
		return nil, 0, fmt.Errorf("%s after the rewrite: %w", name, err)
	}
	return formatted, len(refs), nil
}

// importSpec returns file's import of path, or nil.
func importSpec(file *ast.File, path string) *ast.ImportSpec {
	for _, spec := range file.Imports {
		if p, err := strconv.Unquote(spec.Path.Value); err == nil && p == path {
			return spec
		}
	}
	return nil
}

// importNamed says whether file imports a package under the explicit name.
func importNamed(file *ast.File, name string) bool {
	return slices.ContainsFunc(file.Imports, func(spec *ast.ImportSpec) bool {
		return spec.Name != nil && spec.Name.Name == name
	})
}

// importDecl returns the import declaration that holds spec.
func importDecl(file *ast.File, spec *ast.ImportSpec) *ast.GenDecl {
	for _, decl := range file.Decls {
		if gen, ok := decl.(*ast.GenDecl); ok && gen.Tok == token.IMPORT && slices.Contains(gen.Specs, ast.Spec(spec)) {
			return gen
		}
	}
	return nil
}

// references returns the selector expressions pkg.name of file (pkg an
// identifier: the import, when the file declares no pkg of its own).
func references(file *ast.File, pkg, name string) []*ast.SelectorExpr {
	var refs []*ast.SelectorExpr
	ast.Inspect(file, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		if x, ok := sel.X.(*ast.Ident); ok && x.Name == pkg && sel.Sel.Name == name {
			refs = append(refs, sel)
		}
		return true
	})
	return refs
}

// declares says whether file declares name anywhere (a package-level or
// local declaration, a parameter or result, a := or range variable), which
// would shadow an import of that name.
func declares(file *ast.File, name string) bool {
	found := false
	isName := func(e ast.Expr) bool {
		id, ok := e.(*ast.Ident)
		return ok && id.Name == name
	}
	anyName := func(ids []*ast.Ident) bool {
		return slices.ContainsFunc(ids, func(id *ast.Ident) bool { return id.Name == name })
	}
	ast.Inspect(file, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.ValueSpec:
			found = found || anyName(n.Names)
		case *ast.TypeSpec:
			found = found || n.Name.Name == name
		case *ast.FuncDecl:
			found = found || n.Recv == nil && n.Name.Name == name
		case *ast.FuncType:
			for _, list := range []*ast.FieldList{n.TypeParams, n.Params, n.Results} {
				if list != nil {
					for _, field := range list.List {
						found = found || anyName(field.Names)
					}
				}
			}
		case *ast.AssignStmt:
			found = found || n.Tok == token.DEFINE && slices.ContainsFunc(n.Lhs, isName)
		case *ast.RangeStmt:
			found = found || n.Tok == token.DEFINE && (isName(n.Key) || n.Value != nil && isName(n.Value))
		}
		return !found
	})
	return found
}
