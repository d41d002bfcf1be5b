#!/usr/bin/env bash
# Runs controller-runtime's own pkg/cache test suite (its Ginkgo specs and its
# plain Go tests) on this project's embedded kube-apiserver, as envtest's
# existing cluster (e2e/cmd/envtest-apiserver), and prints the counts.
#
#   bash hack/ctrlcache-suite.sh [controller-runtime|ctrlcache]
#
# controller-runtime (the default): the suite as released, on
#   controller-runtime's own cache: the baseline.
# ctrlcache: every reference to controller-runtime's cache.New in the test
#   files of package cache_test (the public API's tests) becomes
#   ctrlcache.New, this repository's backend (module ./ctrlcache, issue 47).
#   Files of package cache test controller-runtime's unexported code and stay
#   on its own cache; the summary counts them apart.
#
# controller-runtime's module source is copied from the module cache into a
# temporary directory (removed at exit; CTRLCACHE_SUITE_KEEP=1 keeps it), with
# the one change the suite needs outside its tests to build against client-go
# v0.38: a no-op SetShardSelector on controllertest.FakeInformer (v0.38's
# SharedIndexInformer gained it), and its k8s.io requirements at v0.38. In
# mode ctrlcache its go.mod requires this repository's ctrlcache module,
# replaced to ./ctrlcache; ctrlcache's requirement on controller-runtime then
# resolves to the copy itself (the main module), as intended.
#
# Exit status: 0 if every spec and test passed, 1 otherwise, 2 on bad usage.
set -euo pipefail
# client-go v0.38 (Kubernetes 1.38) needs Go 1.27: the go command fetches it from the module proxy.
export GOTOOLCHAIN=go1.27.3 GOWORK=off
cd "$(dirname "$0")/.."
repo=$PWD

CR_VERSION=v0.25.3    # the controller-runtime ctrlcache pins (issue 47)
K8S_VERSION=v0.38.0-beta.0
mode=${1:-controller-runtime}
case $mode in
controller-runtime | ctrlcache) ;;
*)
	echo "usage: $0 [controller-runtime|ctrlcache]" >&2
	exit 2
	;;
esac
if [[ $mode == ctrlcache && ! -f $repo/ctrlcache/go.mod ]]; then
	echo "ctrlcache-suite: mode ctrlcache runs the suite against module github.com/generic-informers/generic/ctrlcache," >&2
	echo "ctrlcache-suite: but $repo/ctrlcache/go.mod does not exist (yet: issue 47). Mode controller-runtime needs no such module." >&2
	exit 1
fi

say() { printf 'ctrlcache-suite: %s\n' "$*"; }
started=$SECONDS
work=$(mktemp -d "${TMPDIR:-/tmp}/ctrlcache-suite.XXXXXX")
server_pid=
cleanup() {
	if [[ -n $server_pid ]] && kill -0 "$server_pid" 2>/dev/null; then
		kill -TERM "$server_pid"
		wait "$server_pid" || true
	fi
	if [[ ${CTRLCACHE_SUITE_KEEP:-} == 1 ]]; then
		say "kept $work"
	else
		rm -rf "$work"
	fi
}
trap cleanup EXIT

# controller-runtime's module source, writable (the module cache's is not).
src=$(go mod download -json "sigs.k8s.io/controller-runtime@$CR_VERSION" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
if [[ -z $src || ! -d $src ]]; then
	echo "ctrlcache-suite: go mod download found no directory for controller-runtime $CR_VERSION" >&2
	exit 1
fi
cr=$work/controller-runtime
cp -R "$src/." "$cr"
chmod -R u+w "$cr"
say "controller-runtime $CR_VERSION copied to $cr"

# client-go v0.38's SharedIndexInformer gained SetShardSelector;
# controllertest.FakeInformer (which asserts it implements it) did not.
cat >"$cr/pkg/controller/controllertest/shardselector.go" <<'EOF'
package controllertest

import "k8s.io/apimachinery/pkg/sharding"

// SetShardSelector implements the Informer interface of client-go v0.38. It
// does nothing, as the fake's other unimplemented methods. (Added by
// generic-informers' hack/ctrlcache-suite.sh.)
func (f *FakeInformer) SetShardSelector(sharding.Selector) error { return nil }
EOF

# go 1.27 and every k8s.io staging requirement (k8s.io/api, client-go, ...;
# not klog, utils or kube-openapi) at v0.38.
edits=(-go=1.27)
for module in $(awk '$1 ~ /^k8s\.io\// && $2 ~ /^v0\.[1-9][0-9]*\./ { print $1 }' "$cr/go.mod"); do
	edits+=("-require=$module@$K8S_VERSION")
done
if [[ $mode == ctrlcache ]]; then
	edits+=(
		-require=github.com/generic-informers/generic/ctrlcache@v0.0.0
		"-replace=github.com/generic-informers/generic/ctrlcache=$repo/ctrlcache"
		"-replace=github.com/generic-informers/generic=$repo"
		# Every module of this repository ctrlcache requires (its go.mod's replaces).
		"-replace=github.com/generic-informers/generic/prometheus=$repo/prometheus"
	)
fi
(cd "$cr" && go mod edit "${edits[@]}")

# The helpers: the rewrite and the summary, and the API server.
go -C "$repo/e2e" build -o "$work/bin/" ./cmd/ctrlcache-suite ./cmd/envtest-apiserver
if [[ $mode == ctrlcache ]]; then
	"$work/bin/ctrlcache-suite" rewrite "$cr/pkg/cache"
fi
# After the rewrite: tidy keeps the ctrlcache requirement only once a file imports it.
(cd "$cr" && go mod tidy)

# Build the suite before the server starts (the run below reuses the build).
(cd "$cr" && go test -count=1 -run '^$' ./pkg/cache/ >/dev/null)

kubeconfig=$work/kubeconfig
"$work/bin/envtest-apiserver" -kubeconfig "$kubeconfig" >"$work/server.out" 2>"$work/server.log" &
server_pid=$!
for ((i = 0; i < 300; i++)); do
	[[ -f $kubeconfig ]] && break
	if ! kill -0 "$server_pid" 2>/dev/null; then
		wait "$server_pid" || true
		server_pid=
		echo "ctrlcache-suite: envtest-apiserver exited before serving:" >&2
		cat "$work/server.log" >&2
		exit 1
	fi
	sleep 1
done
if [[ ! -f $kubeconfig ]]; then
	echo "ctrlcache-suite: envtest-apiserver did not serve within 5 minutes" >&2
	exit 1
fi
say "$(head -n 1 "$work/server.log" | sed "s/; SIGINT.*//")"

say "running controller-runtime's pkg/cache suite (mode $mode)"
suite_started=$SECONDS
(cd "$cr" && USE_EXISTING_CLUSTER=true KUBECONFIG=$kubeconfig go test -json -count=1 -timeout 30m ./pkg/cache/ \
	-args -ginkgo.v -ginkgo.no-color "-ginkgo.json-report=$work/ginkgo.json" >"$work/go-test.json") || true
suite_seconds=$((SECONDS - suite_started))

kill -TERM "$server_pid"
wait "$server_pid" || true
server_pid=

status=0
"$work/bin/ctrlcache-suite" report -mode "$mode" -dir "$cr/pkg/cache" \
	-go-json "$work/go-test.json" -ginkgo-json "$work/ginkgo.json" || status=$?
say "the suite ran in ${suite_seconds}s; everything took $((SECONDS - started))s"
if [[ $status -ne 0 && ${CTRLCACHE_SUITE_KEEP:-} != 1 ]]; then
	say "CTRLCACHE_SUITE_KEEP=1 keeps the copy, go test's JSON output and the Ginkgo report"
fi
exit "$status"
