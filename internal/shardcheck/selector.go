package shardcheck

import (
	"fmt"
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/sharding"
)

var shardRangePattern = regexp.MustCompile(`^shardRange\((object\.metadata\.(?:uid|namespace)), '(0x[0-9a-f]{16,17})', '(0x[0-9a-f]{16,17})'\)$`)

// ParseSelector reads a metav1.ListOptions.ShardSelector strictly, as the
// API server's CEL-based parser (k8s.io/apiserver/pkg/sharding.Parse)
// accepts it: shardRange calls joined by " || ". apimachinery has the
// selector and its String but no parser; the fakes of the library's tests
// and of generictest read the selectors with this one.
func ParseSelector(expr string) (sharding.Selector, error) {
	var reqs []sharding.ShardRangeRequirement
	for part := range strings.SplitSeq(expr, " || ") {
		m := shardRangePattern.FindStringSubmatch(part)
		if m == nil {
			return nil, fmt.Errorf("not a shardRange: %q", part)
		}
		reqs = append(reqs, sharding.ShardRangeRequirement{Key: m[1], Start: m[2], End: m[3]})
	}
	return sharding.NewSelector(reqs...), nil
}
