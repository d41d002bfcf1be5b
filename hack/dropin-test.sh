#!/usr/bin/env bash
# Proves the drop-in promise of package unstructured: client-go's own tests
# of dynamic/dynamicinformer and dynamic/dynamiclister, taken from the module
# cache, run against this library with only their import path changed
# (the package name stays, so no other line of theirs is touched).
#
# Nothing of client-go is committed: the copies live in a temporary folder
# inside the module (so they build with its go.mod) and are removed on exit.
set -euo pipefail
# client-go v0.38 (Kubernetes 1.38) needs Go 1.27: the go command fetches it from the module proxy.
export GOTOOLCHAIN=go1.27.3
cd "$(dirname "$0")/.."

clientgo_version=$(go list -m -f '{{.Version}}' k8s.io/client-go)
go mod download "k8s.io/client-go@${clientgo_version}"
src="$(go list -m -f '{{.Dir}}' k8s.io/client-go)/dynamic"

# A leading underscore keeps `go test ./...` of the library out of it.
work=$(mktemp -d "$PWD/_dropin.XXXXXX")
trap 'rm -rf "$work"' EXIT

count=0
for pkg in dynamicinformer dynamiclister; do
	mkdir -p "$work/$pkg"
	for file in "$src/$pkg"/*_test.go; do
		sed "s#\"k8s.io/client-go/dynamic/$pkg\"#$pkg \"github.com/generic-informers/generic/unstructured\"#" \
			"$file" >"$work/$pkg/$(basename "$file")"
		if grep -q "k8s.io/client-go/dynamic/$pkg\"" "$work/$pkg/$(basename "$file")"; then
			echo "dropin: import of $pkg left unchanged in $file" >&2
			exit 1
		fi
		count=$((count + 1))
	done
done
echo "dropin: running $count client-go ${clientgo_version} test files against package unstructured"
go test -race -count=1 -v "./$(basename "$work")/dynamicinformer" "./$(basename "$work")/dynamiclister" >"$work/out.txt" 2>&1 || true
grep -E "^\s*(--- |PASS|FAIL|ok|panic)" "$work/out.txt" || true
if grep -qE '^(--- FAIL|FAIL|panic)' "$work/out.txt"; then
	exit 1
fi
tests=$(grep -cE '^\s*--- PASS' "$work/out.txt")
if [ "$tests" -eq 0 ]; then echo "dropin: no test ran" >&2; exit 1; fi
echo "dropin: $tests client-go tests and subtests passed"
