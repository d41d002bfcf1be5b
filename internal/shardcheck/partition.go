// Package shardcheck is what the sharding tests of the library and of the
// e2e module check (that the caches of the replicas partition the
// objects), and how the fakes of the library's tests and of generictest
// read a list or watch request as the API server does (Request).
package shardcheck

import (
	"fmt"
	"slices"
)

// Problems says how caches (the names each replica's cache holds) fail to
// partition want: names in two caches, names in none, names in a cache and
// not in want; sorted, nil when they partition it.
func Problems(caches []map[string]bool, want map[string]bool) []string {
	owner := map[string]int{}
	var problems []string
	for i, names := range caches {
		for name := range names {
			if j, ok := owner[name]; ok {
				problems = append(problems, fmt.Sprintf("%s in replicas %d and %d", name, j, i))
			}
			owner[name] = i
			if !want[name] {
				problems = append(problems, fmt.Sprintf("%s in replica %d, not on the server", name, i))
			}
		}
	}
	for name := range want {
		if _, ok := owner[name]; !ok {
			problems = append(problems, name+" in no replica")
		}
	}
	slices.Sort(problems)
	return problems
}
