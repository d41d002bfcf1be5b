#!/usr/bin/env bash
# API compatibility check (golang.org/x/exp/cmd/apidiff, pinned): every
# incompatible change of the exported API since the baseline commit
# (hack/api/baseline) must be listed in hack/api/accepted.txt, so that a
# break is a deliberate, reviewed one.
#
#   hack/apicheck.sh           check; exit 1 on an incompatible change not
#                              accepted (compatible changes are shown)
#   hack/apicheck.sh --accept  write the incompatible changes found into
#                              hack/api/accepted.txt (review its diff)
#
# Each line of accepted.txt is one change as apidiff says it, followed by
# "  # M<n>": the row of docs/migration.md's table of compiler errors that
# tells users what to write instead (migration_table_test.go holds that).
# The check ignores that trailing "# ..." annotation; --accept keeps the
# annotation of every line it writes again, and writes new lines without
# one, so that the test fails until a row is named.
#
# At a release, hack/api/baseline moves to the released commit and
# accepted.txt empties. The baseline's API is rebuilt from git (git
# archive) each run, so nothing binary is committed; the check needs the
# baseline commit in the clone's history. Exit 2: a tool or git failure.
set -euo pipefail
# sort and comm in one order whatever the locale, so that --accept writes
# the same file on every machine.
export LC_ALL=C
# client-go v0.38 (Kubernetes 1.38) needs Go 1.27: the go command fetches it from the module proxy.
export GOTOOLCHAIN=go1.27.3
APIDIFF_VERSION=v0.0.0-20261113113407-e3970619a1a4 # golang.org/x/exp
cd "$(dirname "$0")/.."
root=$PWD

accept=false
if [ "${1:-}" = --accept ]; then accept=true; shift; fi
[ $# -eq 0 ] || { echo "usage: $0 [--accept]" >&2; exit 2; }

baseline=$(grep -v '^#' hack/api/baseline | head -1)
accepted=hack/api/accepted.txt
apidiff=("${APIDIFF:-go}")
[ -n "${APIDIFF:-}" ] || apidiff=(go run "golang.org/x/exp/cmd/apidiff@$APIDIFF_VERSION")

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
git cat-file -e "$baseline^{commit}" 2>/dev/null || { echo "apicheck: baseline commit $baseline is not in this clone's history" >&2; exit 2; }
git archive "$baseline" | tar -x -C "$work"
mkdir "$work/api"

# module directory, import path
M=github.com/generic-informers/generic
packages=(
	".          $M"
	".          $M/typed"
	".          $M/unstructured"
	".          $M/metadata"
	".          $M/generictest"
	"prometheus $M/prometheus"
)

found=$(mktemp)
for entry in "${packages[@]}"; do
	read -r moddir pkg <<<"$entry"
	export_file="$work/api/$(basename "$pkg").api"
	# apidiff must run in the package's own module, not the module cache.
	(cd "$work/$moddir" && "${apidiff[@]}" -w "$export_file" "$pkg") || { echo "apicheck: cannot read $pkg at $baseline" >&2; exit 2; }
	report=$(cd "$root/$moddir" && "${apidiff[@]}" "$export_file" "$pkg") || { echo "apicheck: apidiff failed on $pkg" >&2; exit 2; }
	# Lines under "Incompatible changes:", each "- name: what", as
	# "pkg: name: what".
	awk -v pkg="$pkg" '/^Incompatible changes:/ {on=1; next} /^[A-Z]/ {on=0} on && /^- / {sub(/^- /, ""); print pkg ": " $0}' <<<"$report" >>"$found"
	if grep -q '^Compatible changes:' <<<"$report"; then
		printf '%s: compatible changes since %s:\n%s\n' "$pkg" "${baseline:0:12}" "$(awk '/^Compatible changes:/ {on=1; next} /^[A-Z]/ {on=0} on' <<<"$report")"
	fi
done
sort -u -o "$found" "$found"

# entries prints the accepted changes, without their "  # M<n>" annotations.
entries() { grep -v '^#' "$accepted" | sed 's/[[:space:]][[:space:]]*#.*$//' | sort -u; }

if $accept; then
	# Each change found, with the annotation its line had, if it had one.
	annotated=$(awk '
		NR == FNR {
			if ($0 ~ /^#/) next
			if (match($0, /[[:space:]]+#.*$/)) note[substr($0, 1, RSTART - 1)] = substr($0, RSTART)
			next
		}
		{ print $0 (($0 in note) ? note[$0] : "") }' "$accepted" "$found")
	{
		echo "# Incompatible API changes since the baseline commit (hack/api/baseline),"
		echo "# accepted on purpose: hack/apicheck.sh fails on any other. Written by"
		echo "# hack/apicheck.sh --accept; one per line, as apidiff says it, then"
		echo "# \"  # M<n>\": the row of docs/migration.md's table that tells users what"
		echo "# to write instead (add it by hand; --accept keeps it)."
		[ -z "$annotated" ] || printf '%s\n' "$annotated"
	} >"$accepted"
	echo "apicheck: $(wc -l <"$found") incompatible changes written to $accepted, $(grep -v '^#' "$accepted" | grep -cv '[[:space:]]#' || true) of them without a row of docs/migration.md (name one: '  # M<n>')"
	exit 0
fi

unaccepted=$(comm -23 "$found" <(entries))
stale=$(comm -13 "$found" <(entries))
if [ -n "$stale" ]; then
	printf 'apicheck: accepted but no longer incompatible (run %s --accept to drop them):\n%s\n' "$0" "$stale"
fi
if [ -n "$unaccepted" ]; then
	printf 'apicheck: FAIL: incompatible API changes since %s not accepted in %s:\n%s\n' "${baseline:0:12}" "$accepted" "$unaccepted"
	echo "If the break is meant, accept it: $0 --accept, and say why in the commit."
	exit 1
fi
echo "apicheck: ok: $(wc -l <"$found") incompatible changes since ${baseline:0:12}, all accepted (${#packages[@]} packages)"
