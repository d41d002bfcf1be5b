#!/usr/bin/env bash
# Counts the CPU instructions per read of each read benchmark's contenders
# with valgrind's callgrind: unlike ns/op on a shared 2-core VM, the count is
# the same from run to run. Used for the benchmark report; needs valgrind.
#
#   bash hack/instructions.sh
set -euo pipefail
cd "$(dirname "$0")/.."
ops=2000
bin=$(mktemp -d)/generic.test
go test -c -o "$bin" .
# benchmark  closure-per-contender (in the order generic, client-go-generated, dynamiclister)
while read -r bench closures; do
	set -- $closures
	for contender in generic client-go-generated dynamiclister; do
		out=$(mktemp)
		GODEBUG=asyncpreemptoff=1 valgrind --tool=callgrind --callgrind-out-file="$out" \
			--toggle-collect="*Benchmark${bench}.$1" "$bin" -test.run '^$' -test.bench "${bench}\$" \
			-test.benchtime=${ops}x -test.count=1 >/dev/null 2>&1
		total=$(callgrind_annotate "$out" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}')
		# the benchmark runs its body once with N=1 before the N=${ops} run
		printf '%-22s %-22s %8d instructions/op\n' "$bench" "$contender" $(( total / (ops + 1) ))
		rm -f "$out"
		shift
	done
done <<'LIST'
ListerGet func1 func2 func3
ListerNamespaceList func2 func3 func4
ListerByIndex func2 func3 func4
LIST
