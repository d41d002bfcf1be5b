package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
)

// testFile is what the report needs of one test file of the suite.
type testFile struct {
	// pkg is the file's package: cache_test or cache.
	pkg string
	// tests are its Test functions but those that run the Ginkgo specs.
	tests []string
	// specRunners are its Test functions that call RunSpecs.
	specRunners []string
}

// readTestFiles parses the *_test.go files of dir, keyed by base name.
func readTestFiles(dir string) (map[string]testFile, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
	if err != nil {
		return nil, err
	}
	files := map[string]testFile{}
	fset := token.NewFileSet()
	for _, path := range paths {
		file, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		tf := testFile{pkg: file.Name.Name}
		for _, decl := range file.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || !strings.HasPrefix(fn.Name.Name, "Test") || fn.Name.Name == "TestMain" {
				continue
			}
			if callsRunSpecs(fn) {
				tf.specRunners = append(tf.specRunners, fn.Name.Name)
			} else {
				tf.tests = append(tf.tests, fn.Name.Name)
			}
		}
		files[filepath.Base(path)] = tf
	}
	return files, nil
}

// callsRunSpecs says whether fn calls Ginkgo's RunSpecs (dot-imported or not).
func callsRunSpecs(fn *ast.FuncDecl) bool {
	found := false
	ast.Inspect(fn, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return !found
		}
		switch f := call.Fun.(type) {
		case *ast.Ident:
			found = found || f.Name == "RunSpecs"
		case *ast.SelectorExpr:
			found = found || f.Sel.Name == "RunSpecs"
		}
		return !found
	})
	return found
}
