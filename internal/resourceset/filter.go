package resourceset

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/Masterminds/semver/v3"

	"github.com/kustomize-deploy/kustomize-deploy/internal/source/fetch"
)

// A provider's spec.filter is read as the operator reads it: includeBranch,
// includeTag and includeEnvironment are one include regular expression
// (the last set of them wins, in that order), the exclude ones likewise;
// a pull request is kept when its head branch is included and not
// excluded and it carries every label of labels; a branch by its name; a
// tag by its name and, with semver, when it is a version in the range,
// tags then sorted highest first (else in reverse lexical order); at most
// limit (default 100, at most 10000) are kept, in the order GitHub lists
// them (tags: in that sorted order).

// Filter limits.
const (
	defaultLimit = 100
	maxLimit     = 10000
)

// filter is a provider's spec.filter, compiled.
type filter struct {
	include, exclude *regexp.Regexp
	labels           []string
	semver           *semver.Constraints
	limit            int
}

// newFilter compiles f; its errors name the field at fault.
func newFilter(f *filterSpec) (*filter, error) {
	out := &filter{limit: defaultLimit}
	if f == nil {
		return out, nil
	}
	if f.Limit > maxLimit {
		return nil, fmt.Errorf("spec.filter.limit %d: more than %d", f.Limit, maxLimit)
	}
	if f.Limit > 0 {
		out.limit = f.Limit
	}
	out.labels = f.Labels
	for _, re := range []struct {
		field, expr string
		into        **regexp.Regexp
	}{
		{"includeBranch", f.IncludeBranch, &out.include},
		{"includeTag", f.IncludeTag, &out.include},
		{"includeEnvironment", f.IncludeEnvironment, &out.include},
		{"excludeBranch", f.ExcludeBranch, &out.exclude},
		{"excludeTag", f.ExcludeTag, &out.exclude},
		{"excludeEnvironment", f.ExcludeEnvironment, &out.exclude},
	} {
		if re.expr == "" {
			continue
		}
		rx, err := regexp.Compile(re.expr)
		if err != nil {
			return nil, fmt.Errorf("spec.filter.%s: %w", re.field, err)
		}
		*re.into = rx
	}
	if f.Semver != "" {
		c, err := semver.NewConstraint(f.Semver)
		if err != nil {
			return nil, fmt.Errorf("spec.filter.semver %q: %w", f.Semver, err)
		}
		out.semver = c
	}
	return out, nil
}

// matchString says whether s is included and not excluded.
func (f *filter) matchString(s string) bool {
	if f.include != nil && !f.include.MatchString(s) {
		return false
	}
	return f.exclude == nil || !f.exclude.MatchString(s)
}

// matchLabels says whether labels hold every label of the filter.
func (f *filter) matchLabels(labels []string) bool {
	for _, l := range f.labels {
		if !slices.Contains(labels, l) {
			return false
		}
	}
	return true
}

// tagResult is a tag and the input set it gives.
type tagResult struct {
	name   string
	result map[string]any
}

// tags keeps the tags the filter selects, sorted and limited as the
// operator does; of tags listed twice, the last listing's input set.
func (f *filter) tags(all []tagResult) []tagResult {
	type candidate struct {
		tagResult
		version *semver.Version
		seq     int
	}
	last := map[string]map[string]any{}
	for _, t := range all {
		last[t.name] = t.result
	}
	var kept []candidate
	for i, t := range all {
		if !f.matchString(t.name) {
			continue
		}
		c := candidate{tagResult: tagResult{name: t.name, result: last[t.name]}, seq: i}
		if f.semver != nil {
			v, err := fetch.ParseVersion(t.name)
			if err != nil || !f.semver.Check(v) {
				continue
			}
			c.version = v
		}
		kept = append(kept, c)
	}
	slices.SortStableFunc(kept, func(a, b candidate) int {
		if f.semver != nil {
			if c := b.version.Compare(a.version); c != 0 {
				return c
			}
		} else if c := strings.Compare(b.name, a.name); c != 0 {
			return c
		}
		return a.seq - b.seq
	})
	out := make([]tagResult, 0, min(len(kept), f.limit))
	for _, c := range kept[:min(len(kept), f.limit)] {
		out = append(out, c.tagResult)
	}
	return out
}
