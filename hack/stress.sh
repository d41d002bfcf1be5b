#!/usr/bin/env bash
# Runs the timing-sensitive tests (membership, ownership, controllers over
# memberships, shutdown, lag, reshard) under -race, -count=3, while every
# core is kept busy by a spinning process, as on a loaded CI machine: a test
# that a race of timing can break fails here long before it fails in CI.
#
#   hack/stress.sh            the tests below, -count=3
#   COUNT=10 hack/stress.sh   more runs
#   RUN='TestX|TestY' PKGS=./controller hack/stress.sh   other tests
set -euo pipefail
# client-go v0.38 (Kubernetes 1.38) needs Go 1.27: the go command fetches it from the module proxy.
export GOTOOLCHAIN=go1.27.3
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"

: "${COUNT:=3}"
: "${PKGS:=. ./controller}"
: "${RUN:=Membership|Ownership|Reshard|Shard|Shutdown|Lag|Leav|Release|Retired|Callback|Acquire|Late|Unlist|WaitIdle|Stale|Burst|Follow}"

# Build first, without the spinners: the build is not what is measured.
# shellcheck disable=SC2086
go test -race -count=1 -run '^$' $PKGS >/dev/null

spinners=()
cleanup() { [ ${#spinners[@]} -eq 0 ] || kill "${spinners[@]}" 2>/dev/null || true; }
trap cleanup EXIT
for _ in $(seq "$(nproc)"); do
	( while :; do :; done ) &
	spinners+=($!)
done
echo "hack/stress.sh: ${#spinners[@]} spinning processes; go test -race -count=$COUNT -run '$RUN' $PKGS"
start=$(date +%s)
# shellcheck disable=SC2086
KUBE_CACHE_MUTATION_DETECTOR=true go test -race -count="$COUNT" -timeout 60m -run "$RUN" $PKGS
echo "hack/stress.sh: passed in $(( $(date +%s) - start )) s"
