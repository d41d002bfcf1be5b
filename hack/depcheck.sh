#!/usr/bin/env bash
# Checks that the library's package dependencies point one way
# (docs/architecture.md): drop-ins, typed and generictest -> root -> internal/* ->
# client-go and apimachinery. An internal package imports neither the root
# nor another package of this module but internal/shardsel (the one
# vocabulary of shards), and reports upward only through the hooks it is
# handed; internal/shardsel imports nothing of this module; the root imports only internal packages; the public
# instantiations do not import each other. Test files are not counted:
# their imports are not what a user's build pulls in.
set -euo pipefail
# client-go v0.38 (Kubernetes 1.38) needs Go 1.27: the go command fetches it from the module proxy.
export GOTOOLCHAIN=go1.27.3
cd "$(dirname "$0")/.."
M=github.com/generic-informers/generic

# allowed PKG IMPORT: whether package PKG of the module may import IMPORT
# of the module.
allowed() {
	local pkg=$1 imp=$2
	case $pkg in
	$M/internal/shardsel) return 1 ;;
	$M/internal/*) [[ $imp == "$M/internal/shardsel" ]] ;;
	$M) [[ $imp == $M/internal/* ]] ;;
	$M/typed | $M/unstructured | $M/metadata | $M/controller) [[ $imp == "$M" || $imp == $M/internal/* ]] ;;
	$M/generictest) [[ $imp == "$M" || $imp == "$M/typed" || $imp == $M/internal/* ]] ;;
	$M/examples/*) return 0 ;;
	*) echo "depcheck: no rule for package $pkg; add one to $0" >&2; exit 1 ;;
	esac
}

bad=0
while read -r pkg imports; do
	for imp in $imports; do
		[[ $imp == "$M" || $imp == $M/* ]] || continue
		if ! allowed "$pkg" "$imp"; then
			echo "depcheck: $pkg imports $imp, against the layering"
			bad=1
		fi
	done
done < <(go list -f '{{.ImportPath}} {{join .Imports " "}}' ./...)

# The library module's graph holds none of the e2e module's heavy
# dependencies (docs/architecture.md: importing the library stays light).
if heavy=$(go list -m all | grep -E '^(k8s\.io/kubernetes|sigs\.k8s\.io/controller-runtime|go\.etcd\.io/etcd|github\.com/prometheus/) '); then
	echo "depcheck: the library's module graph holds:"; echo "$heavy"
	bad=1
fi
[ $bad -eq 0 ] && echo "depcheck: ok"
exit $bad
