package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestRewriteSource: in files of package cache_test, every reference to
// controller-runtime's cache.New (call or function value, under any import
// name) becomes ctrlcache.New and ctrlcache is imported; comments, other
// packages' New, cache's other names and files of package cache stay as
// they were; a file where the rewrite could change what a name means is
// refused with an error that says why.
func TestRewriteSource(t *testing.T) {
	tests := []struct {
		name    string
		src     string
		want    string // empty: src unchanged
		wantN   int
		wantErr string
	}{
		{
			name: "calls and function values",
			src: `package cache_test

import (
	"testing"

	kcache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
)

// cache.New in a comment stays.
var newCache cache.NewCacheFunc = cache.New

func TestX(t *testing.T) {
	c, err := cache.New(nil, cache.Options{})
	_, _, _ = c, err, kcache.NewIndexer
	CacheTest(cache.New, cache.Options{})
}
`,
			want: `package cache_test

import (
	"testing"

	"github.com/generic-informers/generic/ctrlcache"
	kcache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
)

// cache.New in a comment stays.
var newCache cache.NewCacheFunc = ctrlcache.New

func TestX(t *testing.T) {
	c, err := ctrlcache.New(nil, cache.Options{})
	_, _, _ = c, err, kcache.NewIndexer
	CacheTest(ctrlcache.New, cache.Options{})
}
`,
			wantN: 3,
		},
		{
			name: "import under another name, not parenthesized",
			src: `package cache_test

import crcache "sigs.k8s.io/controller-runtime/pkg/cache"

var c, err = crcache.New(nil, crcache.Options{})
`,
			want: `package cache_test

import crcache "sigs.k8s.io/controller-runtime/pkg/cache"
import "github.com/generic-informers/generic/ctrlcache"

var c, err = ctrlcache.New(nil, crcache.Options{})
`,
			wantN: 1,
		},
		{
			name: "package cache: controller-runtime's internals",
			src: `package cache

import "sigs.k8s.io/controller-runtime/pkg/cache"

var c, err = cache.New(nil, cache.Options{})
`,
		},
		{
			name: "no reference to New",
			src: `package cache_test

import "sigs.k8s.io/controller-runtime/pkg/cache"

var opts cache.Options
`,
		},
		{
			name: "no import of controller-runtime's cache",
			src: `package cache_test

import cache "k8s.io/client-go/tools/cache"

var s = cache.NewStore(nil)
`,
		},
		{
			name: "the import's name declared in the file",
			src: `package cache_test

import "sigs.k8s.io/controller-runtime/pkg/cache"

func f() {
	cache := struct{ New func() }{}
	cache.New()
}

var _ = cache.New
`,
			wantErr: "declares cache",
		},
		{
			name: "ctrlcache already a name",
			src: `package cache_test

import "sigs.k8s.io/controller-runtime/pkg/cache"

var ctrlcache = cache.New
`,
			wantErr: "declares ctrlcache",
		},
		{
			name: "dot import",
			src: `package cache_test

import . "sigs.k8s.io/controller-runtime/pkg/cache"

var _ = New
`,
			wantErr: "as .",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, n, err := rewriteSource("x_test.go", []byte(tc.src))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("rewriteSource: %v, want an error saying %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := tc.want
			if want == "" {
				want = tc.src
			}
			if diff := cmp.Diff(want, string(got)); diff != "" {
				t.Errorf("rewritten source (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantN, n); diff != "" {
				t.Errorf("references rewritten (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRewriteDir: rewriteDir rewrites the package cache_test files of a
// directory in place, says so per file and leaves package cache files as
// they were; a directory where nothing refers to cache.New is an error (the
// suite has changed shape).
func TestRewriteDir(t *testing.T) {
	tests := []struct {
		name        string
		fixture     string
		wantOut     string
		wantChanged []string
		wantErr     string
	}{
		{
			name:        "a cache_test file and a cache file",
			fixture:     "testdata/rewrite",
			wantOut:     "cache_test.go: 1 references of cache.New now ctrlcache.New\n",
			wantChanged: []string{"cache_test.go"},
		},
		{name: "nothing to rewrite", fixture: "testdata/report/pkg", wantErr: "has the suite changed?"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.CopyFS(dir, os.DirFS(tc.fixture)); err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			_, err := rewriteDir(dir, &out)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("rewriteDir: %v, want an error saying %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantOut, out.String()); diff != "" {
				t.Errorf("output (-want +got):\n%s", diff)
			}
			var changed []string
			entries, err := os.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			for _, entry := range entries {
				before, err1 := os.ReadFile(filepath.Join(tc.fixture, entry.Name()))
				after, err2 := os.ReadFile(filepath.Join(dir, entry.Name()))
				if err1 != nil || err2 != nil {
					t.Fatal(err1, err2)
				}
				if !bytes.Equal(before, after) {
					changed = append(changed, entry.Name())
				}
			}
			if diff := cmp.Diff(tc.wantChanged, changed); diff != "" {
				t.Errorf("files changed (-want +got):\n%s", diff)
			}
		})
	}
}
