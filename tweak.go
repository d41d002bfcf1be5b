package generic

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	selectionop "k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
)

// listTweak is what every list and watch request gets: the user's tweak,
// then the selectors (the options' combined with the tweak's, see
// addTweakSelectors); nil if there is nothing to do.
func (o options) listTweak() TweakListOptionsFunc {
	if o.tweakListOptions == nil && o.labelSelector == "" && o.fieldSelector == "" {
		return nil
	}
	return func(options *metav1.ListOptions) {
		applyTweak(o.tweakListOptions, options)
		options.LabelSelector = o.labelSelector
		options.FieldSelector = o.fieldSelector
	}
}

// addTweakSelectors applies the tweak once, to an empty ListOptions, and
// combines the selectors it sets with the options' (validated already), so
// that they name the informer and are its selection (WithTweakListOptions).
func (o *options) addTweakSelectors() error {
	if o.tweakListOptions == nil {
		return nil
	}
	var tweaked metav1.ListOptions
	o.tweakListOptions(&tweaked)
	var err error
	if o.labelSelector, err = andLabelSelectors(o.labelSelector, tweaked.LabelSelector); err != nil {
		return err
	}
	o.fieldSelector, err = andFieldSelectors(o.fieldSelector, tweaked.FieldSelector)
	return err
}

// andLabelSelectors is the label selector that selects what both own (from
// WithLabelSelector) and tweaked (set by the tweak) select. A label that
// both constrain, differently, is an error naming both.
func andLabelSelectors(own, tweaked string) (string, error) {
	if tweaked == "" || tweaked == own {
		return own, nil
	}
	tweakedSelector, err := labels.Parse(tweaked)
	if err != nil {
		return "", fmt.Errorf("generic: the label selector %q set by WithTweakListOptions: %w", tweaked, err)
	}
	if own == "" {
		return tweakedSelector.String(), nil
	}
	ownSelector, _ := labels.Parse(own)
	ownReqs, _ := ownSelector.Requirements()
	tweakedReqs, _ := tweakedSelector.Requirements()
	byKey := func(r labels.Requirement) (string, string) { return r.Key(), r.String() }
	if key, ok := constrainedDifferently(ownReqs, tweakedReqs, byKey); ok {
		return "", fmt.Errorf("generic: WithLabelSelector(%q) and the label selector %q set by WithTweakListOptions constrain label %q differently: give it in one of them", own, tweaked, key)
	}
	return ownSelector.Add(onlyNewKeys(tweakedReqs, ownReqs, byKey)...).String(), nil
}

// andFieldSelectors is andLabelSelectors for field selectors (from
// WithFieldSelector and the tweak).
func andFieldSelectors(own, tweaked string) (string, error) {
	if tweaked == "" || tweaked == own {
		return own, nil
	}
	tweakedSelector, err := fields.ParseSelector(tweaked)
	if err != nil {
		return "", fmt.Errorf("generic: the field selector %q set by WithTweakListOptions: %w", tweaked, err)
	}
	if own == "" {
		return tweakedSelector.String(), nil
	}
	ownSelector, _ := fields.ParseSelector(own)
	byField := func(r fields.Requirement) (string, string) {
		return r.Field, fields.AndSelectors(fieldTerm(r)).String()
	}
	if field, ok := constrainedDifferently(ownSelector.Requirements(), tweakedSelector.Requirements(), byField); ok {
		return "", fmt.Errorf("generic: WithFieldSelector(%q) and the field selector %q set by WithTweakListOptions constrain field %q differently: give it in one of them", own, tweaked, field)
	}
	terms := []fields.Selector{ownSelector}
	for _, r := range onlyNewKeys(tweakedSelector.Requirements(), ownSelector.Requirements(), byField) {
		terms = append(terms, fieldTerm(r))
	}
	return fields.AndSelectors(terms...).String(), nil
}

// fieldTerm is the selector of one field requirement.
func fieldTerm(r fields.Requirement) fields.Selector {
	if r.Operator == selectionop.NotEquals {
		return fields.OneTermNotEqualSelector(r.Field, r.Value)
	}
	return fields.OneTermEqualSelector(r.Field, r.Value)
}

// constrainedDifferently returns the first key (a label or a field) that
// both a and b constrain, with requirements not the same, and whether
// there is one. describe returns a requirement's key and its text.
func constrainedDifferently[R any](a, b []R, describe func(R) (key, text string)) (string, bool) {
	aByKey, bByKey := requirementsByKey(a, describe), requirementsByKey(b, describe)
	for _, k := range slices.Sorted(maps.Keys(aByKey)) {
		if other, both := bByKey[k]; both && other != aByKey[k] {
			return k, true
		}
	}
	return "", false
}

// onlyNewKeys returns the requirements of reqs on keys that those of
// known do not constrain: those on keys known constrains are the same
// (constrainedDifferently), and would be there twice.
func onlyNewKeys[R any](reqs, known []R, describe func(R) (key, text string)) []R {
	knownKeys := requirementsByKey(known, describe)
	return slices.DeleteFunc(slices.Clone(reqs), func(r R) bool {
		key, _ := describe(r)
		_, ok := knownKeys[key]
		return ok
	})
}

// requirementsByKey writes each key's requirements, sorted, as one string.
func requirementsByKey[R any](reqs []R, describe func(R) (key, text string)) map[string]string {
	all := map[string][]string{}
	for _, r := range reqs {
		key, text := describe(r)
		all[key] = append(all[key], text)
	}
	joined := make(map[string]string, len(all))
	for k, rs := range all {
		slices.Sort(rs)
		joined[k] = strings.Join(slices.Compact(rs), ",")
	}
	return joined
}

// tweakedListerWatcher is lw with tweak applied to the options of every
// list and watch: how NewInformer honours the selectors and the tweak. It
// keeps lw's word on WatchList semantics.
func tweakedListerWatcher(lw cache.ListerWatcher, tweak TweakListOptionsFunc) cache.ListerWatcher {
	inner := cache.ToListerWatcherWithContext(lw)
	return cache.ToListWatcherWithWatchListSemantics(&cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, options metav1.ListOptions) (runtime.Object, error) {
			tweak(&options)
			return inner.ListWithContext(ctx, options)
		},
		WatchFuncWithContext: func(ctx context.Context, options metav1.ListOptions) (watch.Interface, error) {
			tweak(&options)
			return inner.WatchWithContext(ctx, options)
		},
	}, lw)
}
