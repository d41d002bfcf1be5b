#!/usr/bin/env bash
# The tests, as README.md's test command runs them and .ci/run runs README.md:
# the library's packages with -race and client-go's cache mutation detector,
# client-go's own dynamicinformer/dynamiclister and metadatainformer/
# metadatalister tests against packages unstructured and metadata, then the
# e2e module (embedded kube-apiserver; its first build takes about 8 minutes
# on 2 cores).
set -euo pipefail
# client-go v0.38 (Kubernetes 1.38) needs Go 1.27: the go command fetches it from the module proxy.
export GOTOOLCHAIN=go1.27.3
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin:$(go env GOPATH 2>/dev/null || echo "$HOME/go")/bin"

step() { printf '\n=== %s\n' "$*"; }

step "gofmt"
unformatted=$(gofmt -l . e2e)
if [ -n "$unformatted" ]; then
	echo "not gofmt'ed:"; echo "$unformatted"; exit 1
fi

step "library: go vet"
go vet ./...
go -C prometheus vet ./...
go -C ctrlcache vet ./...

step "library: dependencies point one way (hack/depcheck.sh)"
bash hack/depcheck.sh

step "library: golangci-lint ${GOLANGCI_LINT_VERSION:=v2.15.0} (.golangci.yml)"
# It must be built with the Go it checks (a golangci-lint built with an older
# Go refuses a module whose go line is newer): reinstall it otherwise.
if ! golangci-lint version 2>/dev/null | grep -q "version ${GOLANGCI_LINT_VERSION#v} built with $(go env GOVERSION) "; then
	go install "github.com/golangci/golangci-lint/v2/cmd/golangci-lint@${GOLANGCI_LINT_VERSION}"
fi
golangci-lint run ./...
(cd prometheus && golangci-lint run -c ../.golangci.yml ./...)
(cd ctrlcache && golangci-lint run -c ../.golangci.yml ./...)
(cd e2e && golangci-lint run -c ../.golangci.yml ./...)

step "library: API compatibility against hack/api/baseline (hack/apicheck.sh)"
bash hack/apicheck.sh

step "library: go vet and the decoders' tests with apimachinery's fieldsv1byte build tag (FieldsV1 as bytes, v0.37's form; v0.38 interns it by default)"
go vet -tags fieldsv1byte ./...
go test -tags fieldsv1byte -count=1 ./typed

step "library: tests with -race and the cache mutation detector"
KUBE_CACHE_MUTATION_DETECTOR=true go test -race -count=1 ./...

step "library: the timing-sensitive tests under -race -count=3 with every core kept busy (hack/stress.sh)"
bash hack/stress.sh

step "prometheus adapter (a module of its own): tests with -race"
KUBE_CACHE_MUTATION_DETECTOR=true go -C prometheus test -race -count=1 ./...

step "controller-runtime backend (a module of its own, controller-runtime v0.25.3): tests with -race"
KUBE_CACHE_MUTATION_DETECTOR=true go -C ctrlcache test -race -count=1 ./...

step "library: read benchmarks, once each, so that they cannot rot"
go test -run '^$' -bench . -benchtime 1x -count 1 ./... >/dev/null

step "drop-in: client-go's dynamicinformer and dynamiclister tests against package unstructured"
bash hack/dropin-test.sh

step "drop-in: client-go's metadatainformer and metadatalister tests against package metadata"
bash hack/dropin-metadata-test.sh

step "e2e: go vet (the first build of kube-apiserver takes about 8 minutes)"
go -C e2e vet ./...

step "e2e: integration tests, kwatch's demo, embedded API server"
go -C e2e test -count=1 -timeout 30m ./...

step "e2e: cached objects equal client-go's, under client-go's cache mutation detector"
KUBE_CACHE_MUTATION_DETECTOR=true go -C e2e test -count=1 -timeout 10m -run 'TestTypedEqualsClientGo|TestEqualityCorpus' ./integration

step "e2e: every benchmark once at a small size (500 objects), so that none can rot"
BENCH_OBJECTS=500 go -C e2e test ./bench -run '^$' -bench . -benchtime 1x -count 1 -timeout 20m >/dev/null

# About 2 minutes after the e2e steps above (build caches warm).
step "ctrlcache: controller-runtime v0.25.3's own pkg/cache suite against ctrlcache.New, on the embedded API server (hack/ctrlcache-suite.sh)"
bash hack/ctrlcache-suite.sh ctrlcache

step "all tests passed"
