package generic

import (
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	selectionop "k8s.io/apimachinery/pkg/selection"
)

// canonicalLabelSelector writes a label selector (valid: validate checked
// it) in one form for what it selects, as far as its requirements go:
// each requirement as labels.Requirement.String writes it (the values of
// "in" and "notin" sorted), "==" as "=", the requirements sorted and
// without repeats, joined by commas. "a=1,b=2" and "b=2, a==1" are both
// "a=1,b=2": they name one informer, and are sent to the server so.
func canonicalLabelSelector(selector string) string {
	parsed, err := labels.Parse(selector)
	if err != nil {
		return selector
	}
	reqs, _ := parsed.Requirements()
	terms := make([]string, 0, len(reqs))
	for _, r := range reqs {
		if r.Operator() == selectionop.DoubleEquals {
			if single, err := labels.NewRequirement(r.Key(), selectionop.Equals, r.ValuesUnsorted()); err == nil {
				r = *single
			}
		}
		terms = append(terms, r.String())
	}
	return sortedTerms(terms)
}

// canonicalFieldSelector is canonicalLabelSelector for a field selector
// (valid): each requirement as fields writes one term ("==" as "="), the
// terms sorted and without repeats, joined by commas.
func canonicalFieldSelector(selector string) string {
	parsed, err := fields.ParseSelector(selector)
	if err != nil {
		return selector
	}
	reqs := parsed.Requirements()
	terms := make([]string, 0, len(reqs))
	for _, r := range reqs {
		terms = append(terms, fieldTerm(r).String())
	}
	return sortedTerms(terms)
}

// sortedTerms joins terms, sorted and without repeats, by commas.
func sortedTerms(terms []string) string {
	slices.Sort(terms)
	return strings.Join(slices.Compact(terms), ",")
}
