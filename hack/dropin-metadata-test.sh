#!/usr/bin/env bash
# Proves the drop-in promise of package metadata: client-go's own tests of
# metadata/metadatainformer and metadata/metadatalister, taken from the
# module cache, run against this library with only their imports changed.
# Those tests sit in the package they test and call its names unqualified,
# so the one change is a dot import of package metadata (an import of
# either package, if a test had one, would be redirected with its name
# kept). A test that used an unexported name would not compile: it fails.
#
# Nothing of client-go is committed: the copies live in a temporary folder
# inside the module (so they build with its go.mod) and are removed on exit.
set -euo pipefail
# client-go v0.38 (Kubernetes 1.38) needs Go 1.27: the go command fetches it from the module proxy.
export GOTOOLCHAIN=go1.27.3
cd "$(dirname "$0")/.."

lib=github.com/generic-informers/generic/metadata
clientgo_version=$(go list -m -f '{{.Version}}' k8s.io/client-go)
go mod download "k8s.io/client-go@${clientgo_version}"
src="$(go list -m -f '{{.Dir}}' k8s.io/client-go)/metadata"

# A leading underscore keeps `go test ./...` of the library out of it.
work=$(mktemp -d "$PWD/_dropin.XXXXXX")
trap 'rm -rf "$work"' EXIT

count=0
for pkg in metadatainformer metadatalister; do
	mkdir -p "$work/$pkg"
	for file in "$src/$pkg"/*_test.go; do
		out="$work/$pkg/$(basename "$file")"
		sed -E "s#\"k8s.io/client-go/metadata/(metadatainformer|metadatalister)\"#\\1 \"$lib\"#" "$file" >"$out"
		if grep -q "^package $pkg\$" "$out"; then
			sed -i "0,/^import (/s##import (\n\t. \"$lib\"#" "$out"
		fi
		if ! grep -q "\"$lib\"" "$out"; then
			echo "dropin: $file left without an import of $lib" >&2
			exit 1
		fi
		count=$((count + 1))
	done
done
echo "dropin: running $count client-go ${clientgo_version} test files against package metadata"
# client-go's tests import k8s.io/ktesting, which no package of the library
# needs: they build with a copy of go.mod that requires it, at the version
# client-go requires, so that the library's own go.mod stays tidy.
modfile="$work/dropin.mod"
cp go.mod "$modfile"
cp go.sum "$work/dropin.sum"
go get -modfile="$modfile" "k8s.io/ktesting@$(go list -m -f '{{.Version}}' k8s.io/ktesting)"
go test -modfile="$modfile" -race -count=1 -v "./$(basename "$work")/metadatainformer" "./$(basename "$work")/metadatalister" >"$work/out.txt" 2>&1 || true
grep -E "^\s*(--- |PASS|FAIL|ok|panic)|^\s*\S+\.go:[0-9]+:" "$work/out.txt" || true
if grep -qE '^(--- FAIL|FAIL|panic)' "$work/out.txt"; then
	exit 1
fi
tests=$(grep -cE '^\s*--- PASS' "$work/out.txt")
if [ "$tests" -eq 0 ]; then echo "dropin: no test ran" >&2; exit 1; fi
echo "dropin: $tests client-go tests and subtests passed"
